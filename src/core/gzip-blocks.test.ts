/**
 * The block codec under Node's zlib: CRC-32s combine as zlib's crc32 of the whole; a file spliced
 * after any set of block changes equals the file built from scratch, byte for byte, and Node's
 * gunzip reads it; a demo shard in blocks of 1,000 URLs (20 of them: the cost is per block, as in
 * a 50,000-URL shard's 50) is the renderer's bytes and within 0.5 % of one gzip stream at level 6.
 */
import { crc32, gunzipSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { demoSection, withDemoExtensions } from "../demo/demo-data.ts";
import { zlibBlockDeflate } from "../snapshots/block-deflate.ts";
import { EXT_ALL } from "./extensions/kinds.ts";
import { type DeflatedBlock, blockTable, blockText, crc32Combine, deflateBlock, deflateBlocks, gzipOfBlocks, spliceBlocks } from "./gzip-blocks.ts";
import { renderUrlRows } from "./render.ts";
import { blockSlices, planBlocks } from "./shard-blocks.ts";
import type { UrlRow } from "./types.ts";
import { validateBatch } from "./validate.ts";
import { SHARD_EXTENSIONS } from "./writers.ts";

const encoder = new TextEncoder();
const join = (slices: readonly Uint8Array[]): Buffer => Buffer.concat(slices);

/** Document slices: text that compresses like markup (repeats) and like tokens (random), sizes around the 32 KiB window. */
const SLICE = fc
  .tuple(fc.string({ maxLength: 40 }), fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 0xffffff }))
  .map(([word, repeats, seed]) =>
    encoder.encode(`<url><loc>https://a.example/${word}</loc></url>\n`.repeat(repeats % 1_500) + seed.toString(36).repeat(seed % 7)),
  );

describe("the block codec", () => {
  it("combines CRC-32s as zlib computes the CRC of the whole", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3_000 }), fc.uint8Array({ maxLength: 3_000 }), (a, b) => {
        expect(crc32Combine(crc32(a), crc32(b), b.byteLength)).toBe(crc32(Buffer.concat([a, b])));
      }),
      { numRuns: 200 },
    );
  });

  it("a spliced file equals the file built from scratch, byte for byte, and gunzips to the document", () => {
    fc.assert(
      fc.property(fc.array(SLICE, { minLength: 1, maxLength: 8 }), fc.array(fc.tuple(fc.nat(), SLICE), { maxLength: 4 }), (slices, changes) => {
        const before = deflateBlocks(slices, zlibBlockDeflate);
        const file = gzipOfBlocks(before);
        const after = [...slices];
        for (const [at, slice] of changes) after[at % after.length] = slice;
        // Re-deflate what changed and each block whose window (the document's 32 KiB before it)
        // changed. The splice knows only the changed blocks' new bytes: an unchanged block's come
        // back from the stored file, inflated with the stored document before it.
        const changed = new Set(changes.map(([at]) => at % after.length));
        const table = blockTable(before);
        const stored: Uint8Array[] = [];
        const storedBefore = (i: number): Uint8Array => join(Array.from({ length: i }, (_, j) => storedText(j)));
        const storedText = (i: number): Uint8Array => {
          stored[i] ??= blockText(file, table, i, i === 0 ? null : storedBefore(i), zlibBlockDeflate);
          return stored[i]!;
        };
        const now = (i: number): Uint8Array => (changed.has(i) ? after[i]! : storedText(i));
        const nowBefore = (i: number): Uint8Array => join(Array.from({ length: i }, (_, j) => now(j)));
        const windowOf = (bytes: Uint8Array): Buffer => Buffer.from(bytes.subarray(Math.max(0, bytes.byteLength - 32 * 1024)));
        const redo = after.flatMap((_, i) => (changed.has(i) || !windowOf(storedBefore(i)).equals(windowOf(nowBefore(i))) ? [i] : []));
        const replaced = new Map<number, DeflatedBlock>(redo.map((i) => [i, deflateBlock(now(i), nowBefore(i), zlibBlockDeflate)]));
        const spliced = spliceBlocks(file, table, replaced);
        const rebuilt = deflateBlocks(after, zlibBlockDeflate);
        expect(Buffer.from(spliced.file).equals(Buffer.from(gzipOfBlocks(rebuilt)))).toBe(true);
        expect(spliced.table).toEqual(blockTable(rebuilt));
        expect(gunzipSync(spliced.file).equals(join(after))).toBe(true);
      }),
      { numRuns: 60, seed: 53 },
    );
  });

  it("a 20,000-URL shard in blocks of 1,000 URLs: the renderer's bytes, within 0.5 % of one gzip stream", async () => {
    const origin = "https://shop.example.com";
    const records = validateBatch(withDemoExtensions("products", demoSection(origin, "products", 20_000), Date.UTC(2026, 10, 1)), {
      sites: new Set([origin]),
      defaultSection: "pages",
    });
    const rows: UrlRow[] = records.map((r, i) => [
      i + 1,
      r.loc,
      r.lastmod ?? null,
      r.changefreq ?? null,
      r.priority ?? null,
      r.ext ? JSON.stringify(r.ext) : null,
    ]);
    const options = { namespaces: EXT_ALL & SHARD_EXTENSIONS };
    const slices = blockSlices(
      rows,
      planBlocks(
        rows.map((r) => r[0]),
        1_000,
        rows.length,
      ),
      options,
    );
    expect(slices).toHaveLength(20);
    const document = join(slices);
    expect(document.equals(Buffer.from(await new Response(renderUrlRows(rows, options)).arrayBuffer()))).toBe(true);
    const blocked = gzipOfBlocks(deflateBlocks(slices, zlibBlockDeflate));
    expect(gunzipSync(blocked).equals(document)).toBe(true);
    const single = gzipSync(document, { level: 6 }).byteLength;
    expect(blocked.byteLength / single - 1).toBeLessThan(0.005);
  }, 20_000);
});
