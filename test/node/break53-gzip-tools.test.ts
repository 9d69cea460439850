/**
 * Issue 53 ("blocks"), tester break53: files made of deflate blocks (src/core/gzip-blocks.ts with
 * node:zlib) read by `gzip -t` / `gzip -dc` and node:zlib, for generated slices: empty slices (a
 * block whose rows were all deleted), slices over deflate's 32 KiB window, one-byte and non-ASCII
 * slices, and the same file after blocks were replaced (spliceFile).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { blockSpans, deflateBlocks, gzipOfBlocks, spliceFile } from "../../src/core/gzip-blocks.ts";
import { zlibBlockDeflate } from "../../src/snapshots/block-deflate.ts";

const dir = mkdtempSync(join(tmpdir(), "b53-gzip-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const encoder = new TextEncoder();
const slice = fc.oneof(
  fc.constant(""),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.integer({ min: 1, max: 3 }).map((n) => `<url><loc>https://ex.example/caf\u00e9/${"x".repeat(n * 15_000)}</loc></url>`),
  fc.nat(2_000).map((n) => Array.from({ length: 200 }, (_, i) => `<url><loc>https://ex.example/p/${n + i}</loc></url>`).join("")),
);

function gzipTool(file: Uint8Array, n: number): { ok: boolean; out: Buffer; err: string } {
  const path = join(dir, `f${n}.gz`);
  writeFileSync(path, file);
  const test = spawnSync("gzip", ["-t", path]);
  const out = spawnSync("gzip", ["-dc", path], { maxBuffer: 64 * 1024 * 1024 });
  return { ok: test.status === 0 && out.status === 0, out: out.stdout, err: `${test.stderr}${out.stderr}` };
}

describe("break53: block files and gzip tools", () => {
  it("gzip -t, gzip -dc and node:zlib read generated block files, before and after blocks are replaced", () => {
    let n = 0;
    fc.assert(
      fc.property(fc.array(slice, { minLength: 1, maxLength: 8 }), fc.array(fc.tuple(fc.nat(7), slice), { maxLength: 3 }), (texts, changes) => {
        const slices = texts.map((t) => encoder.encode(t));
        const { blocks, layouts } = deflateBlocks(slices, zlibBlockDeflate);
        const file = gzipOfBlocks(blocks);
        const whole = Buffer.concat(slices);
        const tool = gzipTool(file, n++);
        expect(tool.err).toBe("");
        expect(tool.ok).toBe(true);
        expect(tool.out.equals(whole)).toBe(true);
        expect(Buffer.from(gunzipSync(file)).equals(whole)).toBe(true);

        // Blocks replaced and spliced in; the splice finds which windows (the 32 KiB before a block) changed.
        const next = [...slices];
        const replaced = new Map<number, Uint8Array[]>();
        for (const [at, text] of changes) {
          next[at % next.length] = encoder.encode(text);
          replaced.set(at % next.length, [next[at % next.length]!]);
        }
        const spans = blockSpans(
          file,
          layouts.map((l) => l.deflatedBytes),
        );
        const result = spliceFile(spans!, layouts, replaced, zlibBlockDeflate);
        const spliced = { file: gzipOfBlocks(result!.blocks) };
        expect(Buffer.from(spliced.file).equals(Buffer.from(gzipOfBlocks(deflateBlocks(next, zlibBlockDeflate).blocks)))).toBe(true);
        const after = gzipTool(spliced.file, n++);
        expect(after.ok, after.err).toBe(true);
        expect(after.out.equals(Buffer.concat(next))).toBe(true);
      }),
      { numRuns: 60, seed: 5305 },
    );
  });
});
