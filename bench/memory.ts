/**
 * Memory while rendering many records as shards (records → renderUrlset → gzip → discarded).
 *
 * Every case runs in a fresh child process (`node --expose-gc bench/memory.ts --child …`): imports
 * and a warm-up render first, then GCs and the baseline (RSS; V8 heap used + external memory, which
 * holds the Uint8Array chunks); then the render, sampling memory after every output chunk and on a
 * 2 ms timer. Records are generated and validated lazily, 1,000 at a time, so the data set itself
 * never sits in memory: what grows is what the render path holds.
 *
 * Two GC regimes per case:
 * - working set ("eager"): a full GC after every 4th XML chunk (~128 KiB), sampled just before it:
 *   the memory the render path actually needs (live data + at most 4 chunks of garbage);
 * - lazy (Node's defaults, no forced GC): the raw peak, which also counts garbage V8 has not
 *   collected yet (it lets the heap and up to 64 MiB of dead ArrayBuffers pile up between GCs).
 * A control case keeps the XML it renders, to show that the instrument does see buffering.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { MAX_URLS_PER_SITEMAP } from "../src/core/limits.ts";
import { renderUrlset } from "../src/core/render.ts";
import { gzipDocument as gzip } from "../src/documents/gzip.ts";
import { type BenchOptions, type Row, type Section, int, mib, ms, streamRecords } from "./lib.ts";

const LIMIT = 16 * 1024 * 1024;

interface ChildResult {
  records: number;
  shards: number;
  gzBytes: number;
  xmlBytes: number;
  ms: number;
  samples: number;
  baselineRss: number;
  peakRssGrowth: number;
  peakHeapGrowth: number;
  /** maxRSS (high-water mark from getrusage) at the end minus the baseline RSS: an upper bound. */
  maxRssGrowth: number;
}

type Mode = "stream" | "buffered";
type Regime = "eager" | "lazy";
/** XML chunks between forced GCs in the eager regime. */
const GC_EVERY_CHUNKS = 4;

/** Heap in use by JS: V8 heap plus external memory (incl. ArrayBuffers of Uint8Array chunks). */
function heapNow(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

async function child(mode: Mode, regime: Regime, total: number): Promise<ChildResult> {
  const gc = globalThis.gc;
  if (!gc) throw new Error("run with --expose-gc");
  // Warm-up: JIT, zlib, stream machinery; then settle.
  for await (const _ of gzip(renderUrlset(streamRecords(2_000, 10_000_000))) as unknown as AsyncIterable<Uint8Array>) void _;
  for (let i = 0; i < 3; i++) gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const base = process.memoryUsage();
  const baseHeap = base.heapUsed + base.external;
  let peakRss = base.rss;
  let peakHeap = baseHeap;
  let samples = 0;
  const sample = (): void => {
    const rss = process.memoryUsage.rss();
    const heap = heapNow();
    if (rss > peakRss) peakRss = rss;
    if (heap > peakHeap) peakHeap = heap;
    samples++;
  };
  const timer = setInterval(sample, 2);
  const kept: Uint8Array[] = [];
  const started = performance.now();
  let gzBytes = 0;
  let xmlBytes = 0;
  let shards = 0;
  let xmlChunks = 0;
  for (let start = 0; start < total; start += MAX_URLS_PER_SITEMAP) {
    const count = Math.min(MAX_URLS_PER_SITEMAP, total - start);
    shards++;
    const xml = renderUrlset(streamRecords(count, start));
    const counted = xml.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          xmlBytes += chunk.byteLength;
          if (mode === "buffered") kept.push(chunk);
          if (regime === "eager" && ++xmlChunks % GC_EVERY_CHUNKS === 0) {
            sample();
            gc();
          }
          controller.enqueue(chunk);
        },
      }),
    );
    const reader = gzip(counted).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      gzBytes += value.byteLength;
      sample();
    }
  }
  const elapsed = performance.now() - started;
  clearInterval(timer);
  sample();
  const maxRss = process.resourceUsage().maxRSS * 1024;
  return {
    records: total,
    shards,
    gzBytes,
    xmlBytes: mode === "buffered" ? kept.reduce((n, c) => n + c.byteLength, 0) : xmlBytes,
    ms: elapsed,
    samples,
    baselineRss: base.rss,
    peakRssGrowth: peakRss - base.rss,
    peakHeapGrowth: peakHeap - baseHeap,
    maxRssGrowth: maxRss - base.rss,
  };
}

function runChild(mode: Mode, regime: Regime, total: number): ChildResult {
  const out = execFileSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--child", mode, regime, String(total)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out.trim().split("\n").pop()!) as ChildResult;
}

export async function memoryBench(options: BenchOptions): Promise<Section> {
  const sizes = options.quick ? [5_000, 20_000] : [50_000, 500_000];
  const repeats = options.quick ? 1 : 3;
  const rows: Row[] = [];
  const runCase = (mode: Mode, regime: Regime, total: number, times = repeats): ChildResult => {
    // Several fresh processes; the one with the median RSS growth is reported.
    const results = Array.from({ length: times }, () => runChild(mode, regime, total)).sort((a, b) => a.peakRssGrowth - b.peakRssGrowth);
    return results[results.length >> 1]!;
  };
  const growth = (r: ChildResult): string => `RSS +${mib(r.peakRssGrowth)}, heap +${mib(r.peakHeapGrowth)}`;
  for (const total of sizes) {
    const r = runCase("stream", "eager", total);
    const lazy = runCase("stream", "lazy", total, 1);
    const shards = `${r.shards} shard${r.shards > 1 ? "s" : ""}`;
    rows.push({
      name: `${int(total)} records as ${shards}, streamed + gzip: working set`,
      value: growth(r),
      detail: `${mib(r.xmlBytes)} XML → ${mib(r.gzBytes)} gz; ${int(r.samples)} samples`,
      target: "≤ 16 MiB above baseline",
      met: options.quick ? undefined : Math.max(r.peakRssGrowth, r.peakHeapGrowth) <= LIMIT,
    });
    rows.push({
      name: `${int(total)} records as ${shards}, streamed + gzip: lazy GC peak`,
      value: growth(lazy),
      detail: `Node's default GC, no forced collection: includes uncollected garbage; ${ms(lazy.ms)}; getrusage maxRSS +${mib(lazy.maxRssGrowth)}`,
    });
  }
  const largest = sizes[sizes.length - 1]!;
  const control = runCase("buffered", "eager", largest, 1);
  rows.push({
    name: `control: ${int(control.records)} records, XML kept in memory: working set`,
    value: growth(control),
    detail: `holds ${mib(control.xmlBytes)} of XML: the instrument sees buffering`,
  });
  return {
    title: "Memory while rendering (Node, pure core)",
    note:
      `Each case in a fresh \`node --expose-gc\` process; growth of peak RSS and of V8 heap + external memory over the baseline taken after a warm-up render and GC, ` +
      `sampled after every output chunk and every 2 ms. Working set: full GC after every ${GC_EVERY_CHUNKS}th 32 KiB XML chunk, sampled before it. ` +
      `Working set: median of ${repeats} process${repeats > 1 ? "es" : ""}; lazy peak and control: one process. Records generated lazily (1,000 at a time).`,
    rows,
  };
}

if (process.argv[2] === "--child") {
  const result = await child(process.argv[3] as Mode, process.argv[4] as Regime, Number(process.argv[5]));
  console.log(JSON.stringify(result));
}
