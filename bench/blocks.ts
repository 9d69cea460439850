/**
 * `npm run bench -- --only blocks`: a 50,000-URL shard (the demo's products, every extension) as
 * blocks of 1,000 URLs (src/core/gzip-blocks.ts, node:zlib) against one gzip stream at level 6:
 * size, a full build, and what one changed URL costs (its block rendered again, its predecessor's
 * tail as the dictionary, the next block re-primed from the stored file, the splice). Node's zlib,
 * the same C library workerd's node:zlib runs. The rows a change would read are counted from the
 * block plan (the codec is not yet wired into the regeneration: no D1 run measures them).
 */
import { gzipSync } from "node:zlib";
import { EXT_ALL } from "../src/core/extensions/kinds.ts";
import {
  type DeflatedBlock,
  type RawDeflate,
  blockTable,
  blockText,
  deflateBlock,
  deflateBlocks,
  gzipOfBlocks,
  spliceBlocks,
} from "../src/core/gzip-blocks.ts";
import { blockSlice, blockSlices, planBlocks } from "../src/core/shard-blocks.ts";
import type { UrlRow } from "../src/core/types.ts";
import { validateBatch } from "../src/core/validate.ts";
import { SHARD_EXTENSIONS, urlRowElement } from "../src/core/writers.ts";
import { demoSection, withDemoExtensions } from "../src/demo/demo-data.ts";
import { zlibBlockDeflate } from "../src/snapshots/block-deflate.ts";
import { BENCH_ORIGIN, type BenchOptions, type Section, int, median, now } from "./lib.ts";

const URLS = 50_000;
const PER_BLOCK = 1_000;
const DICTIONARY = 32 * 1024;

function timesOf(runs: number, fn: () => void): number[] {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = now();
    fn();
    times.push(now() - t);
  }
  return times;
}

/** Rows of the block before `i` a change of block `i` reads: from its end until their markup covers the dictionary. */
function tailRows(rows: readonly UrlRow[], from: number, to: number, options: object): number {
  let bytes = 0;
  let n = 0;
  for (let at = to - 1; at >= from && bytes < DICTIONARY; at--, n++) bytes += Buffer.byteLength(urlRowElement(rows[at]!, options));
  return n;
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
  const blocks = deflateBlocks(slices, zlibBlockDeflate);
  const file = gzipOfBlocks(blocks);
  const fullMs = median(timesOf(runs, () => gzipOfBlocks(deflateBlocks(slices, zlibBlockDeflate))));
  const independent: RawDeflate = { ...zlibBlockDeflate, deflate: (input) => zlibBlockDeflate.deflate(input, null) };
  const independentBytes = gzipOfBlocks(deflateBlocks(slices, independent)).byteLength;

  // One changed URL in the middle block: its rows rendered again, the predecessor's tail as its
  // dictionary (rendered from that block's last rows), the next block re-primed from the stored file.
  const table = blockTable(blocks);
  const i = Math.floor(lastKeys.length / 2);
  const blockRows = rows.slice(i * PER_BLOCK, (i + 1) * PER_BLOCK);
  const tail = tailRows(rows, (i - 1) * PER_BLOCK, i * PER_BLOCK, render);
  const tailRowsOf = rows.slice(i * PER_BLOCK - tail, i * PER_BLOCK);
  const changedRows = blockRows.map((r, j): UrlRow => (j === 500 ? [r[0], r[1], "2026-11-28T12:00:00Z", r[3], r[4], r[5]] : r));
  let compressMs: number[] = [];
  let spliced: Uint8Array = file;
  const changeMs = timesOf(runs, () => {
    const previous = blockSlice(tailRowsOf, { head: false, tail: false }, render);
    const middle = blockSlice(changedRows, { head: false, tail: false }, render);
    const t = now();
    const oldMiddle = blockText(file, table, i, previous, zlibBlockDeflate);
    const next = blockText(file, table, i + 1, oldMiddle, zlibBlockDeflate);
    const replaced = new Map<number, DeflatedBlock>([
      [i, deflateBlock(middle, previous, zlibBlockDeflate)],
      [i + 1, deflateBlock(next, middle, zlibBlockDeflate)],
    ]);
    compressMs = [...compressMs, now() - t];
    spliced = spliceBlocks(file, table, replaced).file;
  });
  const expected = gzipOfBlocks(
    deflateBlocks(blockSlices([...rows.slice(0, i * PER_BLOCK), ...changedRows, ...rows.slice((i + 1) * PER_BLOCK)], lastKeys, render), zlibBlockDeflate),
  );
  const identical = Buffer.from(spliced).equals(Buffer.from(expected));

  const perChange = PER_BLOCK + tail;
  const pct = (bytes: number): string => `${((bytes / single.byteLength - 1) * 100).toFixed(2)} %`;
  return {
    title: "Shards as blocks (node:zlib, level 6): one 50,000-URL shard in blocks of 1,000 URLs",
    note: `Demo products with every extension: ${int(document.byteLength)} bytes of XML, ${lastKeys.length} blocks; medians of ${runs} runs in Node.`,
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
        name: "one changed URL: inflate 2 stored blocks, deflate 2, (compressing) / with rendering the block and the splice",
        value: `${median(compressMs).toFixed(1)} ms`,
        detail: `${median(changeMs).toFixed(1)} ms in all; spliced = full rebuild: ${identical ? "yes" : "NO"}`,
        target: "≤ 20 ms compressing",
        met: median(compressMs) <= 20 && identical,
      },
      {
        name: "rows one changed URL reads (from the block plan): its block + the predecessor's rows covering 32 KiB",
        value: int(perChange),
        detail: `${int(PER_BLOCK)} + ${int(tail)}; today the whole shard, ${int(URLS)}`,
        target: "≤ 2,500",
        met: perChange <= 2_500,
      },
    ],
  };
}
