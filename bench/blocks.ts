/**
 * `npm run bench -- --only blocks`: a 50,000-URL shard (the demo's products, every extension) as
 * blocks of 1,000 URLs (src/core/gzip-blocks.ts, node:zlib) against one gzip stream at level 6:
 * size, a full build, and what one changed URL costs on the path a regeneration runs
 * (src/regen/splice.ts `spliced`): the stored blocks inflated in order from the checkpoint before
 * the change (every CHECKPOINT_EVERY-th block keeps its dictionary) up to the one after it, every
 * other block's stored bytes checked by their CRC-32, the changed block rendered and deflated, the
 * next one deflated again, the file joined. Measured for a change in the first, the middle and
 * the last block. Node's zlib, the same C library
 * workerd's node:zlib runs. The rows a change reads are its block's (the dictionary comes from the
 * stored file, not from rows): counted on D1 by `--only workerd` (BENCHMARKS.md "Issue 53 (blocks)").
 */
import { gzipSync } from "node:zlib";
import { EXT_ALL } from "../src/core/extensions/kinds.ts";
import { type BlockLayout, type RawDeflate, blockSpans, deflateBlocks, gzipOfBlocks, spliceFile } from "../src/core/gzip-blocks.ts";
import { blockSlice, blockSlices, planBlocks } from "../src/core/shard-blocks.ts";
import type { UrlRow } from "../src/core/types.ts";
import { validateBatch } from "../src/core/validate.ts";
import { SHARD_EXTENSIONS } from "../src/core/writers.ts";
import { demoSection, withDemoExtensions } from "../src/demo/demo-data.ts";
import { zlibBlockDeflate } from "../src/snapshots/block-deflate.ts";
import { BENCH_ORIGIN, type BenchOptions, type Section, int, median, now } from "./lib.ts";

const URLS = 50_000;
const PER_BLOCK = 1_000;

function timesOf(runs: number, fn: () => void): number[] {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = now();
    fn();
    times.push(now() - t);
  }
  return times;
}

/** One changed URL in block `i`, as src/regen/splice.ts `spliced` does it: compressing time, all of it, and the file. */
function spliceOne(
  file: Uint8Array,
  layouts: readonly BlockLayout[],
  rows: readonly UrlRow[],
  lastKeys: readonly number[],
  i: number,
  render: object,
): { compressMs: number; allMs: number; file: Uint8Array; changedRows: UrlRow[] } {
  const t0 = now();
  const from = i * PER_BLOCK;
  const changedRows = rows
    .slice(from, (i + 1) * PER_BLOCK)
    .map((r, j): UrlRow => (j === PER_BLOCK / 2 ? [r[0], r[1], "2026-11-28T12:00:00Z", r[3], r[4], r[5]] : r));
  const text = blockSlice(changedRows, { head: i === 0, tail: i === lastKeys.length - 1 }, render);
  const t1 = now();
  const spans = blockSpans(
    file,
    layouts.map((l) => l.deflatedBytes),
  )!;
  // The splice's own codec step (src/regen/splice.ts → spliceFile): the stored blocks inflated from
  // the checkpoint before the change to where the windows agree again, the changed block and the
  // next deflated, the rest copied after a CRC-32 of their stored bytes.
  const out = spliceFile(spans, layouts, new Map([[i, [text]]]), zlibBlockDeflate)!;
  const compressMs = now() - t1;
  const spliced = gzipOfBlocks(out.blocks);
  return { compressMs, allMs: now() - t0, file: spliced, changedRows };
}

export function blocksBench(options: BenchOptions): Section {
  const runs = Math.max(5, options.runs * 4);
  const records = validateBatch(withDemoExtensions("products", demoSection(BENCH_ORIGIN, "products", URLS), Date.UTC(2026, 10, 1)), {
    sites: new Set([BENCH_ORIGIN]),
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
  const render = { namespaces: EXT_ALL & SHARD_EXTENSIONS };
  const lastKeys = planBlocks(
    rows.map((r) => r[0]),
    PER_BLOCK,
    URLS,
  );
  const slices = blockSlices(rows, lastKeys, render);
  const document = Buffer.concat(slices);

  const single = gzipSync(document, { level: 6 });
  const singleMs = median(timesOf(runs, () => gzipSync(document, { level: 6 })));
  const { blocks, layouts } = deflateBlocks(slices, zlibBlockDeflate);
  const file = gzipOfBlocks(blocks);
  const fullMs = median(timesOf(runs, () => gzipOfBlocks(deflateBlocks(slices, zlibBlockDeflate).blocks)));
  const independent: RawDeflate = { ...zlibBlockDeflate, deflate: (input) => zlibBlockDeflate.deflate(input, null) };
  const independentBytes = gzipOfBlocks(deflateBlocks(slices, independent).blocks).byteLength;

  // One changed URL in the first, the middle and the last block, on the splice path of a regeneration.
  const at = [0, Math.floor(lastKeys.length / 2), lastKeys.length - 1];
  const changes = at.map((i) => {
    const tries = Array.from({ length: runs }, () => spliceOne(file, layouts, rows, lastKeys, i, render));
    const { file: spliced, changedRows } = tries[0]!;
    const expected = gzipOfBlocks(
      deflateBlocks(blockSlices([...rows.slice(0, i * PER_BLOCK), ...changedRows, ...rows.slice((i + 1) * PER_BLOCK)], lastKeys, render), zlibBlockDeflate)
        .blocks,
    );
    return {
      i,
      compressMs: median(tries.map((t) => t.compressMs)),
      allMs: median(tries.map((t) => t.allMs)),
      identical: Buffer.from(spliced).equals(Buffer.from(expected)),
    };
  });
  const worst = Math.max(...changes.map((c) => c.compressMs));
  const identical = changes.every((c) => c.identical);
  const pct = (bytes: number): string => `${((bytes / single.byteLength - 1) * 100).toFixed(2)} %`;
  return {
    title: "Shards as blocks (node:zlib, level 6): one 50,000-URL shard in blocks of 1,000 URLs",
    note: `Demo products with every extension: ${int(document.byteLength)} bytes of XML, ${lastKeys.length} blocks; medians of ${runs} runs in Node. The rows a change reads (its block's) are counted on D1 by --only workerd.`,
    rows: [
      { name: "one gzip stream, gzipSync level 6: bytes; wall", value: int(single.byteLength), detail: `${singleMs.toFixed(1)} ms` },
      {
        name: "blocks, each primed by the previous block's last 32 KiB: bytes over one stream",
        value: pct(file.byteLength),
        detail: `${int(file.byteLength)} bytes; full build ${fullMs.toFixed(1)} ms`,
        target: "≤ 0.5 %",
        met: file.byteLength <= single.byteLength * 1.005,
      },
      { name: "independent blocks (no dictionary): bytes over one stream", value: pct(independentBytes), detail: int(independentBytes) },
      {
        name: "one changed URL (splice.ts's path): inflate from the checkpoint before it to the block after it, deflate 2; block 1 / 26 / 50 (compressing)",
        value: changes.map((c) => `${c.compressMs.toFixed(1)} ms`).join(" / "),
        detail: `with rendering the block and joining the file: ${changes.map((c) => `${c.allMs.toFixed(1)} ms`).join(" / ")}; spliced = full rebuild: ${identical ? "yes" : "NO"}`,
        target: "≤ 20 ms compressing",
        met: worst <= 20 && identical,
      },
    ],
  };
}
