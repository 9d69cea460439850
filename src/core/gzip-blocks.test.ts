/**
 * The block codec under Node's zlib: CRC-32s combine as zlib's crc32 of the whole; a file spliced
 * after any set of block changes (a block replaced by one or two) equals the file built from
 * scratch, byte for byte, and Node's gunzip reads it; its checkpoints hold the windows before
 * their blocks; a splice reads back only from the checkpoint before a change, and refuses a damaged
 * stored block or checkpoint; a demo shard in blocks of 1,000 URLs (20 of them: the cost is per block, as in
 * a 50,000-URL shard's 50) is the renderer's bytes and within 0.5 % of one gzip stream at level 6.
 */
import { crc32, gunzipSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { demoSection, withDemoExtensions } from "../demo/demo-data.ts";
import { zlibBlockDeflate } from "../snapshots/block-deflate.ts";
import { crc32Combine } from "./crc32-combine.ts";
import { EXT_ALL } from "./extensions/kinds.ts";
import { type BlockLayout, CHECKPOINT_EVERY, type RawDeflate, blockSpans, deflateBlocks, gzipOfBlocks, spliceFile } from "./gzip-blocks.ts";
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

function spansOf(file: Uint8Array, layouts: readonly BlockLayout[]): Uint8Array[] {
  return blockSpans(
    file,
    layouts.map((l) => l.deflatedBytes),
  )!;
}

/** node:zlib, counting the inflates of stored blocks (views of `file`'s bytes) and of checkpoints apart. */
function countingInflates(file: Uint8Array): { codec: RawDeflate; blocks: () => number; checkpoints: () => number } {
  let blocks = 0;
  let checkpoints = 0;
  const codec: RawDeflate = {
    ...zlibBlockDeflate,
    inflate: (deflated, dictionary) => {
      if (deflated.buffer === file.buffer) blocks++;
      else checkpoints++;
      return zlibBlockDeflate.inflate(deflated, dictionary);
    },
  };
  return { codec, blocks: () => blocks, checkpoints: () => checkpoints };
}

describe("the block codec", () => {
  it("combines CRC-32s as zlib computes the CRC of the whole", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3_000 }), fc.uint8Array({ maxLength: 3_000 }), (a, b) => {
        expect(crc32Combine(crc32(a), crc32(b), b.byteLength)).toBe(crc32(Buffer.concat([a, b])));
      }),
      { numRuns: 200 },
    );
  });

  it("a spliced file equals the file built from scratch, byte for byte, and gunzips to the document; its checkpoints hold their windows", () => {
    fc.assert(
      fc.property(
        fc.array(SLICE, { minLength: 1, maxLength: 20 }),
        fc.array(fc.tuple(fc.nat(), fc.array(SLICE, { minLength: 1, maxLength: 2 })), { maxLength: 4 }),
        (slices, changes) => {
          const before = deflateBlocks(slices, zlibBlockDeflate);
          const file = gzipOfBlocks(before.blocks);
          const replaced = new Map<number, Uint8Array[]>(changes.map(([at, texts]) => [at % slices.length, texts]));
          const after = slices.flatMap((slice, i) => replaced.get(i) ?? [slice]);
          const result = spliceFile(spansOf(file, before.layouts), before.layouts, replaced, zlibBlockDeflate);
          const rebuilt = deflateBlocks(after, zlibBlockDeflate);
          expect(Buffer.from(gzipOfBlocks(result!.blocks)).equals(Buffer.from(gzipOfBlocks(rebuilt.blocks)))).toBe(true);
          expect(gunzipSync(gzipOfBlocks(result!.blocks)).equals(join(after))).toBe(true);
          // Checkpoints stay with the blocks they were made for: where none was split, exactly a rebuild's.
          const split = [...replaced.values()].some((texts) => texts.length > 1);
          if (!split) expect(result!.layouts).toEqual(rebuilt.layouts);
          expect(result!.layouts.map(({ checkpoint: _, ...l }) => l)).toEqual(rebuilt.layouts.map(({ checkpoint: _, ...l }) => l));
          result!.layouts.forEach((layout, i) => {
            if (!layout.checkpoint) return;
            const window = join(after.slice(0, i)).subarray(-32 * 1024);
            expect(Buffer.from(zlibBlockDeflate.inflate(layout.checkpoint.deflated, null)).equals(window)).toBe(true);
          });
        },
      ),
      { numRuns: 60, seed: 53 },
    );
  });

  it("reads back from the checkpoint before a change, not from the file's start", () => {
    const slices = Array.from({ length: 50 }, (_, i) => encoder.encode(`<url><loc>https://a.example/${i}/</loc></url>\n`.repeat(900)));
    const { blocks, layouts } = deflateBlocks(slices, zlibBlockDeflate);
    expect(layouts.filter((l) => l.checkpoint)).toHaveLength(Math.floor(49 / CHECKPOINT_EVERY));
    const file = gzipOfBlocks(blocks);
    for (const changed of [0, 7, 8, 30, 49]) {
      const counted = countingInflates(file);
      const text = encoder.encode(`<url><loc>https://a.example/changed/</loc></url>\n`.repeat(900));
      const result = spliceFile(spansOf(file, layouts), layouts, new Map([[changed, [text]]]), counted.codec);
      const after = slices.map((s, i) => (i === changed ? text : s));
      expect(Buffer.from(gzipOfBlocks(result!.blocks)).equals(Buffer.from(gzipOfBlocks(deflateBlocks(after, zlibBlockDeflate).blocks)))).toBe(true);
      // The stored blocks from the checkpoint at or before the change up to the one after it (each
      // block is over 32 KiB here, so the windows agree again after that one); every checkpoint is
      // inflated once to be checked (the one read back from, twice at most; one whose window
      // changed is made again instead), none more.
      const from = changed - (changed % CHECKPOINT_EVERY);
      expect(counted.blocks()).toBe(Math.min(changed + 1, 49) - from + 1);
      expect(counted.checkpoints()).toBeGreaterThanOrEqual(layouts.filter((l) => l.checkpoint).length - 1);
      expect(counted.checkpoints()).toBeLessThanOrEqual(layouts.filter((l) => l.checkpoint).length + 1);
    }
  });

  it("refuses a stored block or checkpoint that is not what its table says", () => {
    const slices = Array.from({ length: 20 }, (_, i) => encoder.encode(`<url><loc>https://a.example/${i}/</loc></url>\n`.repeat(900)));
    const { blocks, layouts } = deflateBlocks(slices, zlibBlockDeflate);
    const file = gzipOfBlocks(blocks);
    const change = new Map([[12, [encoder.encode("<url><loc>https://a.example/x</loc></url>\n")]]]);
    expect(spliceFile(spansOf(file, layouts), layouts, change, zlibBlockDeflate)).not.toBeNull();
    const flipped = (at: number): Uint8Array => {
      const copy = file.slice();
      copy[at] = copy[at]! ^ 0x20;
      return copy;
    };
    const offset = (i: number): number => 10 + layouts.slice(0, i).reduce((n, l) => n + l.deflatedBytes, 0);
    // A block copied unread (block 2, far from the change), one read back (block 13), the checkpoint read from (block 8's).
    expect(spliceFile(spansOf(flipped(offset(2) + 100), layouts), layouts, change, zlibBlockDeflate)).toBeNull();
    expect(spliceFile(spansOf(flipped(offset(13) + 100), layouts), layouts, change, zlibBlockDeflate)).toBeNull();
    const checkpoint = layouts[8]!.checkpoint!;
    const damaged = checkpoint.deflated.slice();
    const middle = damaged.byteLength >> 1;
    damaged[middle] = damaged[middle]! ^ 0x20;
    const withDamage = layouts.map((l, i) => (i === 8 ? { ...l, checkpoint: { ...checkpoint, deflated: damaged } } : l));
    expect(spliceFile(spansOf(file, withDamage), withDamage, change, zlibBlockDeflate)).toBeNull();
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
    const blocked = gzipOfBlocks(deflateBlocks(slices, zlibBlockDeflate).blocks);
    expect(gunzipSync(blocked).equals(document)).toBe(true);
    const single = gzipSync(document, { level: 6 }).byteLength;
    expect(blocked.byteLength / single - 1).toBeLessThan(0.005);
  }, 20_000);
});
