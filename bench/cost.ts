/**
 * `npm run bench -- --only cost`: what a site costs a month on Workers Paid, modelled: the counts
 * each event costs (a crawler fetch, a changed record, a regeneration run, a shard or block
 * re-rendered), as measured by the benches and tests named beside them, times each scenario's
 * events, times Cloudflare's published prices. Not a month of metered traffic: every count that
 * was not measured is marked as assumed. The regeneration before issue 53 (a touched shard re-read
 * and re-gzipped whole: "today", the before column) and the splice path that replaced it (a touched
 * shard's changed blocks re-rendered and spliced into its stored file, src/regen/splice.ts) are
 * priced side by side; the splice path's counts are the ones `--only workerd --scale 1m` measured
 * on D1 and KV (SPLICE below).
 */
import { type Section, int } from "./lib.ts";

/**
 * Prices, read 28 Nov 2026 from stored copies (no network from this machine): Workers
 * developers.cloudflare.com/workers/about/pricing (Standard: 10 M requests and 30 M CPU ms
 * included); D1 /shared notes from developers.cloudflare.com/d1/platform/pricing (25 B rows read,
 * 50 M rows written included); KV blog.cloudflare.com/workers-kv-free-tier and
 * developers.cloudflare.com/kv/platform/pricing (10 M reads, 1 M writes/deletes, 1 GB included);
 * Queues developers.cloudflare.com/queues/platform/pricing (1 M operations included, an operation
 * per 64 KB written, read or deleted); D1 storage as README.md cites it (5 GB included, $0.75/GB-month).
 * Not counted: the crawler log's writes, Durable Objects (KV record source only), Cache API (free).
 */
const PRICE = {
  base: 5,
  requests: { included: 10e6, perMillion: 0.3 },
  cpuMs: { included: 30e6, perMillion: 0.02 },
  d1Read: { included: 25e9, perMillion: 0.001 },
  d1Written: { included: 50e6, perMillion: 1 },
  kvRead: { included: 10e6, perMillion: 0.5 },
  kvWrite: { included: 1e6, perMillion: 5 },
  kvGbMonth: { included: 1, perUnit: 0.5 },
  d1GbMonth: { included: 5, perUnit: 0.75 },
  queueOps: { included: 1e6, perMillion: 0.4 },
} as const;

/** Per-event counts. `measured` names where; the rest are assumptions, said as such. */
const PER = {
  /** A crawler fetch of a shard or the index: a request, a snapshot read (no Cache API hit assumed), its CPU (assumed 2 ms). */
  fetch: { requests: 1, kvReads: 1, cpuMs: 2 },
  /** A changed record: D1 rows written (measured: D1RecordWriter, 1,000 updates, 7.1 a record with its indexes and the change feed's trigger). */
  change: { d1Written: 7.1, cpuMs: 0.05, requestsPerRecord: 1 / 1_000 },
  /** A regeneration run: two jobs (regenerate, notify), 3 queue operations each; the manifest and state written (assumed 20 rows). */
  run: { queueOps: 6, d1Written: 20, cpuMs: 20 },
  /** A shard re-rendered today: its rows read, its render and gzip (Worker CPU measured: bench --only cold-shard, 180–200 ms). */
  shardToday: { d1Read: 50_000, cpuMs: 200 },
  /** A published shard before issue 53: its snapshot written, the superseded one deleted, GC rows (assumed 3). */
  shardPublished: { kvWrites: 1, kvDeletes: 1, d1Written: 3 },
  /** D1 bytes a URL takes with its indexes (bench --only capacity, BENCHMARKS.md "Capacity": 410). */
  d1BytesPerUrl: 410,
  /** Gzip bytes of a 50,000-URL shard (bench --only blocks: 1.03 MB with every extension). */
  shardGzBytes: 1.03e6,
} as const;

/**
 * The splice path, measured: `npm run bench -- --only workerd --scale 1m --runs 1` (BENCHMARKS.md
 * "Issue 53 (blocks)"), 100 changes spread over the 16 products shards, each in its own block: the
 * runs' D1 rows read (every statement: change feed, manifest, the blocks' rows) and the Worker
 * process's CPU, divided by the 100 blocks rendered; KV and D1 writes per spliced shard from the
 * same runs' counts. A block is at most ~1,000 rows at any site size, so these hold at 100M.
 * Measured 28 Nov 2026 17:46–17:56 UTC (three runs, 1-min load 4–11).
 */
const SPLICE = {
  /** 100,361 rows ÷ 100 blocks (every run): the blocks' rows, the change feed's, the manifest's. */
  d1ReadPerBlock: 1_004,
  /** Worker CPU ÷ 100 blocks in three runs: 12.3, 11.1, 14.6 ms; the median. At ~2 blocks a shard (100M) the per-shard share weighs more. */
  cpuMsPerBlock: 12.3,
  /**
   * Reads per spliced shard: its stored file, the block table after it in the same value (one read;
   * measured as 2 while the table was its own KV value, src/adapters/kv/snapshot-store.ts `withBlocks`).
   */
  kvReadsPerShard: 1,
  /** Writes per spliced shard: the new snapshot, its table in the same value (measured 2 with the table apart). */
  kvWritesPerShard: 1,
  /** Deletes per spliced shard, later (snapshot-gc): the superseded snapshot (measured 2 with the table apart). */
  kvDeletesPerShard: 1,
  /**
   * D1 rows written by a run: 14, + 8 a spliced shard (its manifest row, updated alone since the
   * manifest save writes only rows that differ, and its snapshot_gc registration, supersede and
   * confirm). Measured 28 Nov 2026 21:27 UTC at 1M: one shard spliced of 20 listed, 22 rows; 16 of
   * 20, 142 rows (before the save wrote only what differs: 85 and 250, 3 rows more a listed shard).
   */
  d1WrittenPerRun: 14,
  d1WrittenPerShard: 8,
  /** The block table after each snapshot's gzip: ~100 bytes a block and a checkpoint (~5 KB) every 8th (adapters/kv/snapshot-blocks.ts). */
  tableBytesPerShard: 45_000,
} as const;

interface Scenario {
  name: string;
  urls: number;
  sites: number;
  changesPerDay: number;
  runsPerDay: number;
  fetchesPerMonth: number;
  /** Priced before issue 53 too (the side-by-side columns); the README's hourly rows only with blocks. */
  before?: boolean;
}

const SCENARIOS: readonly Scenario[] = [
  {
    name: "1M URLs, 10,000 changes a day (a run an hour)",
    urls: 1e6,
    sites: 1,
    changesPerDay: 10_000,
    runsPerDay: 24,
    fetchesPerMonth: 1e6,
    before: true,
  },
  {
    name: "100M URLs, 1M changes a day, published within 5 min",
    urls: 100e6,
    sites: 1,
    changesPerDay: 1e6,
    runsPerDay: 288,
    fetchesPerMonth: 1e6,
    before: true,
  },
  {
    name: "10,000 sites × 10,000 URLs, 100 changes a day each (assumed), a run an hour",
    urls: 10_000,
    sites: 10_000,
    changesPerDay: 100,
    runsPerDay: 24,
    fetchesPerMonth: 1e6,
    before: true,
  },
  // The README's table: 1 % of the URLs changing a day, a run an hour.
  { name: "10M URLs, 100,000 changes a day (a run an hour)", urls: 10e6, sites: 1, changesPerDay: 100_000, runsPerDay: 24, fetchesPerMonth: 1e6 },
  { name: "100M URLs, 1M changes a day (a run an hour)", urls: 100e6, sites: 1, changesPerDay: 1e6, runsPerDay: 24, fetchesPerMonth: 1e6 },
];

const over = (n: number, p: { included: number; perMillion: number }): number => (Math.max(0, n - p.included) / 1e6) * p.perMillion;
const touched = (units: number, changes: number): number => units * (1 - Math.exp(-changes / units));

function monthly(s: Scenario, blocks: boolean): { dollars: number; lines: string; kvPutFloor: number; published: number } {
  const days = 30;
  const shards = Math.ceil(s.urls / 50_000);
  const blocksPerSite = Math.ceil(s.urls / 1_000);
  const changesPerRun = s.changesPerDay / s.runsPerDay;
  const runs = s.sites * s.runsPerDay * days;
  // Distinct shards (and blocks) a run touches, changes spread uniformly.
  const shardsPerRun = touched(shards, changesPerRun);
  const blocksPerRun = touched(blocksPerSite, changesPerRun);
  const changes = s.sites * s.changesPerDay * days;
  const published = runs * shardsPerRun;
  // A shard smaller than 50,000 URLs costs its share of a full one's rows and CPU.
  const shardShare = Math.min(1, s.urls / 50_000);
  // Before: the touched shards' rows and the change feed's; with blocks the measured rows a block include the feed's.
  const d1Read = blocks ? runs * blocksPerRun * SPLICE.d1ReadPerBlock : runs * shardsPerRun * shardShare * PER.shardToday.d1Read + changes;
  const d1Written = blocks
    ? changes * PER.change.d1Written + runs * SPLICE.d1WrittenPerRun + published * SPLICE.d1WrittenPerShard
    : changes * PER.change.d1Written + runs * PER.run.d1Written + published * PER.shardPublished.d1Written;
  const cpuMs =
    s.fetchesPerMonth * PER.fetch.cpuMs +
    changes * PER.change.cpuMs +
    runs * PER.run.cpuMs +
    runs * (blocks ? blocksPerRun * SPLICE.cpuMsPerBlock : shardsPerRun * shardShare * PER.shardToday.cpuMs);
  const requests = s.fetchesPerMonth * PER.fetch.requests + changes * PER.change.requestsPerRecord;
  const kvReads = s.fetchesPerMonth * PER.fetch.kvReads + (blocks ? published * SPLICE.kvReadsPerShard : 0);
  const kvWrites = published * (blocks ? SPLICE.kvWritesPerShard + SPLICE.kvDeletesPerShard : PER.shardPublished.kvWrites + PER.shardPublished.kvDeletes);
  const storedGb = (s.sites * (s.urls / 50_000) * (PER.shardGzBytes + (blocks ? SPLICE.tableBytesPerShard : 0))) / 1e9;
  const queueOps = runs * PER.run.queueOps;
  const d1Gb = (s.sites * s.urls * PER.d1BytesPerUrl) / 1e9;
  const parts = {
    requests: over(requests, PRICE.requests),
    cpu: over(cpuMs, PRICE.cpuMs),
    d1Read: over(d1Read, PRICE.d1Read),
    d1Written: over(d1Written, PRICE.d1Written),
    kvRead: over(kvReads, PRICE.kvRead),
    kvWrite: over(kvWrites, PRICE.kvWrite),
    kvStorage: Math.max(0, storedGb - PRICE.kvGbMonth.included) * PRICE.kvGbMonth.perUnit,
    d1Storage: Math.max(0, d1Gb - PRICE.d1GbMonth.included) * PRICE.d1GbMonth.perUnit,
    queue: over(queueOps, PRICE.queueOps),
  };
  const dollars = Object.values(parts).reduce((a, b) => a + b, 0);
  // What any design that publishes one KV value per touched shard per run pays for those puts alone.
  const kvPutFloor = over(published, PRICE.kvWrite);
  const lines = [
    `D1 read ${int(d1Read / 1e6)} M ($${parts.d1Read.toFixed(2)})`,
    `D1 written ${int(d1Written / 1e6)} M ($${parts.d1Written.toFixed(2)})`,
    `KV writes+deletes ${int(kvWrites / 1e3)} k ($${parts.kvWrite.toFixed(2)})`,
    `KV reads ${int(kvReads / 1e3)} k ($${parts.kvRead.toFixed(2)})`,
    `KV ${storedGb.toFixed(1)} GB ($${parts.kvStorage.toFixed(2)})`,
    `D1 ${d1Gb.toFixed(1)} GB ($${parts.d1Storage.toFixed(2)})`,
    `CPU ${int(cpuMs / 1e6)} M ms ($${parts.cpu.toFixed(2)})`,
    `requests ${int(requests / 1e3)} k ($${parts.requests.toFixed(2)})`,
    `queue ${int(queueOps / 1e3)} k ops ($${parts.queue.toFixed(2)})`,
  ].join("; ");
  return { dollars, lines, kvPutFloor, published };
}

export function costBench(): Section {
  const rows = SCENARIOS.flatMap((s) =>
    (s.before ? [false, true] : [true]).map((blocks) => {
      const m = monthly(s, blocks);
      return {
        name: `${s.name}, 1M crawler fetches a month: ${blocks ? "with blocks (the splice path's measured counts)" : "before (a touched shard re-rendered whole)"}`,
        value: `$${m.dollars.toFixed(2)}`,
        detail: m.lines,
        ...(s === SCENARIOS[1] ? { target: "≤ $25 beyond the base", met: m.dollars <= 25 } : {}),
      };
    }),
  );
  const fast = SCENARIOS[1]!;
  const floor = monthly(fast, true);
  rows.push({
    name: `${fast.name}: the KV puts alone, one snapshot a touched shard a run (any design that publishes each shard as its own KV value)`,
    value: `$${floor.kvPutFloor.toFixed(2)}`,
    detail: `${int(floor.published / 1e3)} k puts a month (${int(floor.published / (fast.runsPerDay * 30))} of the 2,000 shards touched a run) at $5 a million past the 1 M included: over the goal before D1 is paid`,
    target: "≤ $25 beyond the base",
    met: floor.kvPutFloor <= 25,
  });
  return {
    title: "What a month costs beyond the Workers Paid base ($5), modelled from measured counts",
    note: "Prices read 28 Nov 2026 from stored copies of Cloudflare's pricing pages (bench/cost.ts names them). Per-event counts: bench/cost.ts `PER` (each measured or marked assumed) and `SPLICE` (the splice path, measured by --only workerd --scale 1m).",
    rows,
  };
}
