/**
 * End to end in workerd (Miniflare 5, local D1 seeded per scale): live render, index, manifest
 * rebuild, and — once their code exists — snapshot serve, Cache API hit, 304 and the cron
 * regeneration. Each scale runs in a fresh workerd with a fresh database, so the first request of
 * a scale is a cold isolate.
 *
 * Rows read are D1's own `meta.rows_read`, summed over every statement by the bench Worker's
 * counting D1 wrapper (bench/worker/bench-worker.ts) while it runs the real request path. Every
 * request, regeneration run and write batch runs under the enforcing meter (one invocation each,
 * bench/limits.ts reports the largest per path).
 */
import { type Harness, type HttpResult, peaksText, startHarness, withPeak } from "./harness.ts";
import { type BenchOptions, type Count, type ScaledRow, type ScaledSection, type Section, heapCapText, int, median, mib, ms, now } from "./lib.ts";
import { limitsContext, scaleLabel } from "./limits.ts";
import { loadBench } from "./load.ts";
import { type Regen, incrementalRows, regenerate, untilQuiet } from "./regen-runs.ts";
import { peer, sitemapItemsOfUrlset } from "./renderer.ts";
import { ADMIN_TOKEN } from "./write-to-served.ts";

/** How a scale's records are spread over sections (the first one gets the full shard measured). */
export const MIX = [
  { section: "products", share: 0.8 },
  { section: "pages", share: 0.1 },
  { section: "blog", share: 0.1 },
] as const;
const SEED_BATCH = 50_000;
/** From this many records on (--scale 2m, 10m) the cron's first pass and 1,000 scattered changes are measured too. */
const LARGE = 2_000_000;
/** Keyset page sizes compared for the live render (50,000 ÷ 1,000 = 50 queries: the Free plan's cap per invocation). */
const PAGE_SIZES = [1_250, 2_500, 5_000, 10_000] as const;
export const SHARD = "/sitemap-products-1.xml";
export const GZIP = { "accept-encoding": "gzip" };

export type { Count } from "./lib.ts";

/** One measured value of one scale: formatted text and whether it met its target. */
interface Cell {
  text: string;
  met?: boolean | undefined;
}

type ScaleResult = Map<string, Cell>;

interface RowSpec {
  key: string;
  name: string;
  target?: string;
}

/** A row this scale does not measure (the cron's first pass and 1,000 changes: large scales only). */
const NOT_MEASURED = "n/a (not measured at this scale)";

/** Row order and targets of the end-to-end table. Rows not measured at a scale print NOT_MEASURED. */
const ROWS: RowSpec[] = [
  { key: "seed", name: "seed: demo records, multi-row INSERTs in D1 batches inside the Worker" },
  { key: "rebuild", name: "full manifest rebuild (rebuildManifest, one keyset walk): wall" },
  { key: "rebuildRows", name: "full manifest rebuild: D1 rows read" },
  { key: "firstRender", name: "first request after start (cold isolate): shard, live render, gzip" },
  { key: "liveRender", name: "cold live render of a full shard (50,000 URLs), gzip: wall (median)", target: "≤ 400 ms" },
  { key: "liveRenderIdentity", name: "cold live render, identity (no gzip): wall (median)" },
  { key: "liveRows", name: "cold live render: D1 rows read (whole request)", target: "≤ 50,500" },
  {
    key: "vsSitemapJs",
    name: "cold live render over HTTP ÷ sitemap.js rendering + gzipping the same URLs in memory (Node), interleaved in one run",
    target: "≤ 1.15",
  },
  { key: "liveRss", name: "cold live render: workerd RSS growth (the Worker's process)" },
  {
    key: "liveCpu",
    name: "cold live render: CPU per request, the Worker's process / the storage process (D1 reads overlap the render when both run at once)",
  },
  { key: "breakdownRead", name: "  breakdown: D1 reads only (keyset pages of 2,500 rows, records discarded)" },
  { key: "breakdownRender", name: "  breakdown: render only, in-memory records in pages of 2,500 → gzip, in workerd" },
  {
    key: "overlapRatio",
    name: "  cold live render (overlapped reads + render) ÷ max(reads alone, render alone), same run",
    target: "≤ 1.15",
  },
  { key: "pageSweep", name: "  page size: reader → render → gzip in workerd, no HTTP (median per rows/page; reads alone)" },
  { key: "index", name: "index /sitemap.xml, edge cache off (manifest copy cached at the location): wall (median)" },
  { key: "indexRows", name: "index, edge cache off: D1 rows read" },
  { key: "floor", name: "request floor: loopback HTTP to workerd, Worker answers at once (no app, no I/O): wall (median)" },
  { key: "floorBody", name: "request floor + the cached shard's gzip body from memory (no app, no cache read): wall (median)" },
  { key: "cronPass", name: "first full pass by cron runs under the default REGEN_MAX_SHARDS / REGEN_MAX_ROWS (large scales only): runs, wall" },
  { key: "regenFull", name: "full regeneration (site pass, every shard rendered + stored): wall" },
  { key: "regenFullRows", name: "full regeneration: D1 rows read (all statements)", target: "≤ 1.02 × records" },
  { key: "regenFullMem", name: "full regeneration: memory (the Worker isolate's heap; workerd RSS growth per process)" },
  { key: "snapshot", name: "snapshot serve (pre-rendered shard from KV, edge cache off): wall (median)", target: "≤ 20 ms" },
  { key: "cacheHit", name: "Cache API hit (shard, gzip): wall (median)", target: "≤ 5 ms" },
  { key: "notModified", name: "304 (If-None-Match): wall (median)" },
  {
    key: "crawlerLog",
    name: "Cache API hit as a verified Googlebot (its IP in the stored ranges) − as a browser, interleaved: added latency (difference of medians)",
    target: "≤ 0.2 ms",
  },
  { key: "regenIncrOne", name: "incremental regeneration, 100 changed records in one shard: rows read, shards rendered" },
  { key: "regenIncrSpread", name: "incremental regeneration, 100 changed records spread over every products shard: rows read, shards rendered" },
  {
    key: "writeToServed",
    name: "one record in the middle of the measured shard changed through the admin API: from its 200 to the shard's new snapshot served (one regeneration run)",
  },
  { key: "regenIncr1000", name: "incremental regeneration, 1,000 scattered changed records (large scales only): rows read, shards rendered" },
];

function scaleName(total: number): string {
  return `${scaleLabel(total)} records`;
}

/** Seeds the mix with change stamps a month back (older than any settle window), ascending. */
export async function seed(h: Harness, total: number): Promise<void> {
  let stamp = Date.now() - 30 * 86_400_000;
  for (const { section, share } of MIX) {
    const count = Math.round(total * share);
    for (let start = 0; start < count; start += SEED_BATCH) {
      const n = Math.min(SEED_BATCH, count - start);
      await h.bench("seed", { origin: h.origin, section, start, count: n, stamp });
      stamp += n;
    }
  }
}

async function timesOf(runs: number, fn: () => Promise<{ ms: number; status: number }>, expect = 200): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const r = await fn();
    if (r.status !== expect) throw new Error(`expected ${expect}, got ${r.status}`);
    times.push(r.ms);
  }
  return times;
}

export const spread = (times: readonly number[]): string =>
  `${ms(median(times))} (${times.length} runs, ${ms(Math.min(...times))}–${ms(Math.max(...times))})`;

/** The real request path with the Cache API layer off (every request renders or reads a snapshot). */
export const NO_EDGE_CACHE = JSON.stringify({ EDGE_CACHE_TTL: "0" });
export const uncached = (path: string): string => `/__bench/as?path=${encodeURIComponent(path)}&vars=${encodeURIComponent(NO_EDGE_CACHE)}`;

export function sourceOf(r: HttpResult): string {
  const v = r.headers["x-sitemap-source"];
  return typeof v === "string" ? v : "live";
}

/** Times `path`, checking every answer came from `source` (X-Sitemap-Source; absent = live). */
export async function timedSource(
  h: Harness,
  runs: number,
  path: string,
  source: string,
  headers: Record<string, string> = GZIP,
  status = 200,
): Promise<number[]> {
  return timesOf(
    runs,
    async () => {
      const r = await h.get(path, headers);
      if (r.status === status && sourceOf(r) !== source) throw new Error(`${path}: expected source ${source}, got ${sourceOf(r)}`);
      return r;
    },
    status,
  );
}

/** Millisecond-scale rows are cheap: more runs, so their medians shrug off a busy moment. */
const cheapRuns = (options: BenchOptions): number => (options.quick ? options.runs : Math.max(15, options.runs * 3));

/** Snapshot, cache, 304 and regeneration rows (src/regen, src/http/cache): after the live-render rows. */
async function cachingRows(h: Harness, total: number, options: BenchOptions, result: ScaleResult): Promise<void> {
  const runs = cheapRuns(options);
  if (total >= LARGE) {
    // What a fresh deployment's hourly cron does: runs until one renders nothing more. This pass
    // is the full regeneration at large scales (every shard rendered once, over several runs).
    const pass = await untilQuiet(h);
    result.set("cronPass", { text: `${pass.runs} runs, ${pass.rendered} shards rendered, ${ms(pass.ms)} of run time in all` });
    result.set("regenFull", { text: `${ms(pass.ms)} in ${pass.runs} cron runs (${pass.rendered} shards rendered, ${pass.statements} D1 statements)` });
    result.set("regenFullRows", {
      text: `${int(pass.rowsRead)} summed over the ${pass.runs} runs (${(pass.rowsRead / total).toFixed(3)} × records)`,
      met: pass.rowsRead <= 1.02 * total,
    });
    if (pass.peaks) result.set("regenFullMem", { text: `at most in one run: ${peaksText(pass.peaks)}` });
  } else {
    // A site pass: one job step, continued (as the regenerate job continues its chain) while the
    // step's bounds (its time budget, its share of the invocation's limits) leave work.
    const full = await regenerate(h, true);
    const r = full.regen;
    let runs = 1;
    let [wall, rows, recordRows, rendered, statements] = [full.ms, r.rowsRead, r.summary.rowsRead, r.summary.shardsRendered, r.queries];
    const kvOf = (x: Regen): number => Object.values(x.kvOps).reduce((n, v) => n + v, 0);
    let kvOps = kvOf(r);
    for (let last = r.summary; (last.pendingShards > 0 || last.passPending) && runs < 50; runs++) {
      const next = await regenerate(h, false);
      last = next.regen.summary;
      [wall, rows, recordRows] = [wall + next.ms, rows + next.regen.rowsRead, recordRows + last.rowsRead];
      [rendered, statements] = [rendered + last.shardsRendered, Math.max(statements, next.regen.queries)];
      kvOps = Math.max(kvOps, kvOf(next.regen));
    }
    const kvText = Object.entries(r.kvOps)
      .map(([op, n]) => `${op} ${n}`)
      .join(", ");
    const inRuns =
      runs === 1
        ? `${statements} D1 statements, ${kvOps} KV operations: ${kvText}`
        : `${runs} runs, the largest ${statements} D1 statements, ${kvOps} KV operations`;
    result.set("regenFull", { text: `${ms(wall)} (${r.summary.mode}, ${rendered} shards rendered, ${inRuns})` });
    result.set("regenFullRows", {
      text: `${int(rows)} (${(rows / total).toFixed(3)} × records; the run${runs === 1 ? "" : "s"} count${runs === 1 ? "s" : ""} ${int(recordRows)} record rows)`,
      met: rows <= 1.02 * total,
    });
    result.set("regenFullMem", { text: `${runs === 1 ? "" : "the first run: "}${peaksText(full.peaks)}` });
  }

  await new Promise((resolve) => setTimeout(resolve, 1_000)); // let the run's after-work settle
  const snapshot = await timedSource(h, runs, uncached(SHARD), "snapshot");
  result.set("snapshot", { text: spread(snapshot), met: median(snapshot) <= 20 });

  // Fill the edge cache (stored in waitUntil after the body completed), then hit it.
  let filled = false;
  for (let i = 0; i < 50 && !filled; i++) {
    filled = sourceOf(await h.get(SHARD, GZIP)) === "cache";
    if (!filled) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!filled) throw new Error(`${SHARD} never came from the edge cache`);
  const hits = await timedSource(h, runs, SHARD, "cache");
  result.set("cacheHit", { text: spread(hits), met: median(hits) <= 5 });
  // What moving those bytes costs by itself: the same size from the Worker's memory, no app.
  const size = (await h.get(SHARD, GZIP)).bytes;
  const body = await timesOf(runs, () => h.get(`/__bench/blob?bytes=${size}`, GZIP));
  result.set("floorBody", { text: `${spread(body)}, ${mib(size)}` });

  // The crawler log's cost on the hot path (docs/crawlers.md): the same cache hit as a browser and as a
  // verified Googlebot, interleaved so that both see the same machine; the first crawler request writes
  // its row (after the answer), the rest of the minute's are coalesced, as in production.
  await h.bench("crawler-ranges", { name: "googlebot", prefix: "192.0.2.0/24" });
  const browser = { ...GZIP, "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/150.0 Safari/537.36" };
  const googlebot = {
    ...GZIP,
    "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "cf-connecting-ip": "192.0.2.10",
  };
  const asBrowser: number[] = [];
  const asCrawler: number[] = [];
  const pairs = options.quick ? 50 : 600;
  // Alternating which goes first (ABBA), so that neither always follows the other's after-work.
  const one = async (headers: Record<string, string>, into: number[]) => into.push((await timedSource(h, 1, SHARD, "cache", headers))[0]!);
  for (let i = 0; i < pairs; i++) {
    if (i % 2 === 0) {
      await one(browser, asBrowser);
      await one(googlebot, asCrawler);
    } else {
      await one(googlebot, asCrawler);
      await one(browser, asBrowser);
    }
  }
  const added = median(asCrawler) - median(asBrowser);
  result.set("crawlerLog", {
    text: `${added.toFixed(3)} ms (crawler ${ms(median(asCrawler))}, browser ${ms(median(asBrowser))}; ${pairs} pairs)`,
    met: added <= 0.2,
  });

  const etag = (await h.get(SHARD, GZIP)).headers["etag"];
  if (typeof etag !== "string") throw new Error("no ETag on the shard");
  const conditional = await timedSource(h, runs, SHARD, "not-modified", { ...GZIP, "if-none-match": etag }, 304);
  result.set("notModified", { text: spread(conditional) });

  await incrementalRows(h, total, { section: MIX[0].section, shard: SHARD, uncachedPath: uncached(SHARD), large: total >= LARGE }, (key, text) =>
    result.set(key, { text }),
  );
}

async function measureScale(total: number, options: BenchOptions, withLoad: boolean): Promise<{ result: ScaleResult; load?: Section }> {
  const result: ScaleResult = new Map();
  limitsContext("workerd", total);
  const h = await startHarness({ INDEXNOW_ENDPOINT: "", PING_URLS: "", ADMIN_TOKEN }, options);
  try {
    const seeded = await (async () => {
      const t = now();
      await seed(h, total);
      return now() - t;
    })();
    result.set("seed", { text: `${ms(seeded)} (${int(total / (seeded / 1000))} rows/s)` });

    const t = now();
    const rebuilt = await h.bench<Count & { shards: number; urls: number }>("rebuild", { origin: h.origin });
    const rebuildMs = now() - t;
    result.set("rebuild", { text: `${ms(rebuildMs)} (${rebuilt.shards} shards)` });
    result.set("rebuildRows", { text: `${int(rebuilt.rowsRead)} (${(rebuilt.rowsRead / total).toFixed(2)} × records)` });

    // Live renders (no snapshot exists yet; edge cache off): the first meets a cold isolate.
    const shardUrls = Math.min(50_000, Math.round(total * MIX[0].share));
    const runs = options.runs;
    const first = await h.get(uncached(SHARD), GZIP);
    if (first.status !== 200 || sourceOf(first) !== "live") throw new Error(`GET ${SHARD} → ${first.status} from ${sourceOf(first)}`);
    result.set("firstRender", { text: `${ms(first.ms)} (${mib(first.bytes)} gz)` });
    const cpuBefore = { worker: h.workerdCpu(), storage: h.storageCpu() };
    const live = await timedSource(h, runs, uncached(SHARD), "live");
    const cpuPer = (now: number, before: number): string => (Number.isFinite(now) ? ms((now - before) / runs) : "— (same process)");
    result.set("liveCpu", {
      text: `${cpuPer(h.workerdCpu(), cpuBefore.worker)} / ${cpuPer(h.storageCpu(), cpuBefore.storage)} (wall ${ms(median(live))})`,
    });
    result.set("liveRender", { text: spread(live), met: shardUrls === 50_000 ? median(live) <= 400 : undefined });
    const identity = await timedSource(h, Math.max(3, runs - 2), uncached(SHARD), "live", {});
    result.set("liveRenderIdentity", { text: spread(identity) });

    // The same URLs rendered and gzipped by sitemap.js in memory (Node, this process), between
    // cold live renders of the shard over HTTP: the one comparison a reviewer can repeat by hand.
    const served = await (await fetch(new URL(uncached(SHARD), h.url))).text();
    const items = sitemapItemsOfUrlset(served);
    await peer(items.slice(0, 2_000), true)(); // warm-up
    const peerTimes: number[] = [];
    const liveTimes: number[] = [];
    for (let i = 0; i < Math.max(3, Math.min(runs, 5)); i++) {
      const t0 = now();
      await peer(items, true)();
      peerTimes.push(now() - t0);
      liveTimes.push((await h.get(uncached(SHARD), GZIP)).ms);
    }
    result.set("vsSitemapJs", {
      text: `${(median(liveTimes) / median(peerTimes)).toFixed(2)} (cold shard ${ms(median(liveTimes))} ÷ sitemap.js ${ms(median(peerTimes))}; ${int(items.length)} URLs)`,
      met: shardUrls === 50_000 ? median(liveTimes) <= 1.15 * median(peerTimes) : undefined,
    });
    const counted = await h.bench<Count>("count", { path: SHARD, vars: NO_EDGE_CACHE }, "GET");
    result.set("liveRows", {
      text: `${int(counted.rowsRead)} (${counted.queries} queries, ${int(shardUrls)} URLs)`,
      met: shardUrls === 50_000 ? counted.rowsRead <= 50_500 : undefined,
    });
    const rss = await withPeak(h.workerdRss, () => h.get(uncached(SHARD), GZIP), 5);
    result.set("liveRss", { text: `+${mib(rss.peak - rss.before)} (of ${mib(rss.before)})` });

    // Where the live render's time goes: the D1 reads alone, and the render alone (same workerd).
    const reads = await timesOf(runs, async () => {
      const t0 = now();
      await h.bench("read", { origin: h.origin, section: MIX[0].section, n: 1 }, "GET");
      return { ms: now() - t0, status: 200 };
    });
    result.set("breakdownRead", { text: spread(reads) });
    await h.bench("render", { origin: h.origin, count: shardUrls, prepare: 1 }, "GET");
    const renders = await timesOf(runs, async () => {
      const t0 = now();
      await h.bench("render", { origin: h.origin, count: shardUrls, gzip: 1 }, "GET");
      return { ms: now() - t0, status: 200 };
    });
    result.set("breakdownRender", { text: spread(renders) });
    const floorOfParts = Math.max(median(reads), median(renders));
    result.set("overlapRatio", {
      text: `${(median(live) / floorOfParts).toFixed(2)} (${ms(median(live))} ÷ ${ms(floorOfParts)})`,
      met: shardUrls === 50_000 ? median(live) <= 1.15 * floorOfParts : undefined,
    });

    // The page size, chosen by measurement: the overlapped path at several sizes (reads alone beside it).
    const sweep: string[] = [];
    for (const pageRows of PAGE_SIZES) {
      const timeOf = (route: string) =>
        timesOf(runs, async () => {
          const t0 = now();
          await h.bench(route, { origin: h.origin, section: MIX[0].section, n: 1, pageRows }, "GET");
          return { ms: now() - t0, status: 200 };
        });
      const rendered = await timeOf("render-d1");
      const read = await timeOf("read");
      sweep.push(`${int(pageRows)}: ${ms(median(rendered))} (reads ${ms(median(read))})`);
    }
    result.set("pageSweep", { text: sweep.join("; ") });

    const index = await timesOf(cheapRuns(options), () => h.get(uncached("/sitemap.xml"), GZIP));
    result.set("index", { text: spread(index) });
    const indexCount = await h.bench<Count>("count", { path: "/sitemap.xml", vars: NO_EDGE_CACHE }, "GET");
    result.set("indexRows", { text: `${int(indexCount.rowsRead)} (${indexCount.queries} queries)` });

    // What any request costs here before the app does anything: context for the small timings below.
    const floor = await timesOf(cheapRuns(options), () => h.get("/__bench/ping"));
    result.set("floor", { text: spread(floor) });

    await cachingRows(h, total, options, result);

    const load = withLoad ? await loadBench(h, options, { shard: SHARD, records: total }) : undefined;
    return load ? { result, load } : { result };
  } finally {
    await h.dispose();
  }
}

export async function workerdBench(options: BenchOptions, withLoad: boolean): Promise<{ e2e: ScaledSection; load?: Section }> {
  const results: ScaleResult[] = [];
  let load: Section | undefined;
  for (let i = 0; i < options.scales.length; i++) {
    const last = i === options.scales.length - 1;
    const measured = await measureScale(options.scales[i]!, options, withLoad && last);
    results.push(measured.result);
    if (measured.load) load = measured.load;
  }
  const rows: ScaledRow[] = ROWS.map((spec) => {
    const cells = results.map((r) => r.get(spec.key));
    const row: ScaledRow = { name: spec.name, values: cells.map((c) => c?.text ?? NOT_MEASURED), met: cells.map((c) => c?.met) };
    if (spec.target) row.target = spec.target;
    return row;
  });
  const e2e: ScaledSection = {
    title: "End to end in workerd (Miniflare 5, local D1)",
    note:
      `Fresh workerd and database per scale; ${options.storage === "separate" ? "D1, KV and Cache in a second workerd process (as remote services, harness.ts)" : "D1, KV and Cache in the Worker's own workerd process and thread (--storage same)"}; records ${MIX.map((m) => `${m.share * 100}% ${m.section}`).join(", ")}; ` +
      `the measured shard is ${SHARD} (the first 50,000 products). Wall = loopback HTTP request to the last body byte, measured from Node; ` +
      `rows read = D1 \`meta.rows_read\` summed over every statement of the request. "${NOT_MEASURED}": rows for large scales (≥ 2M) only.${heapCapText(options)}`,
    columns: options.scales.map(scaleName),
    rows,
  };
  return load ? { e2e, load } : { e2e };
}
