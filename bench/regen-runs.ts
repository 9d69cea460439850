/**
 * Regeneration runs as the end-to-end benches drive them (bench/workerd.ts, bench/kv-scale.ts):
 * one `/__bench/regen` call is one `regenerate` job step, with its D1 rows and KV operations
 * counted; `untilQuiet` runs them as the cron would until one renders nothing more. The
 * incremental rows change records and measure what the runs then read, write and splice.
 */
import type { Harness, Peaks } from "./harness.ts";
import { withPeaks } from "./harness.ts";
import { type Count, int, ms, now } from "./lib.ts";
import { writeToServed } from "./write-to-served.ts";

/** The share of the records in the measured section (workerd.ts MIX: products). */
const PRODUCTS_SHARE = 0.8;

export interface Regen extends Count {
  summary: {
    mode: string;
    rowsRead: number;
    shardsChecked: number;
    shardsRendered: number;
    shardsSpliced: number;
    blocksRendered: number;
    changesRead: number;
    published: boolean;
    converged: boolean;
    pendingShards: number;
    passPending: boolean;
    error?: string;
  };
  /** KV operations by method (URLS and SNAPSHOTS), and keys read by bulk gets. */
  kvOps: Record<string, number>;
  kvBulkKeys: number;
}

export async function regenerate(h: Harness, full: boolean): Promise<{ ms: number; regen: Regen; peaks: Peaks<Regen> }> {
  const t = now();
  const peaks = await withPeaks(h, () => h.bench<Regen>("regen", { origin: h.origin, full: full ? 1 : 0 }));
  return { ms: now() - t, regen: peaks.value, peaks };
}

/** Cron runs until one renders nothing more (that last run is not counted): sums, and the highest memory growth of a run. */
export interface Quiet {
  runs: number;
  ms: number;
  rowsRead: number;
  /** D1 rows written by the runs (manifest, state, snapshot registrations). */
  rowsWritten: number;
  rendered: number;
  /** Shards spliced (only their changed blocks re-rendered, src/regen/splice.ts) and those blocks. */
  spliced: number;
  blocks: number;
  statements: number;
  /** KV operations of all counted runs (a bulk get is one), and keys read by bulk gets. */
  kvOps: number;
  kvBulkKeys: number;
  /** The same KV operations by method (`get`, `put`, `getWithMetadata`, …). */
  kvByOp: Record<string, number>;
  /** The largest of each memory figure over the counted runs; null when no run was counted. */
  peaks: Omit<Peaks<unknown>, "value"> | null;
}

export async function untilQuiet(h: Harness): Promise<Quiet> {
  const sum: Quiet = {
    runs: 0,
    ms: 0,
    rowsRead: 0,
    rowsWritten: 0,
    rendered: 0,
    spliced: 0,
    blocks: 0,
    statements: 0,
    kvOps: 0,
    kvBulkKeys: 0,
    kvByOp: {},
    peaks: null,
  };
  for (let i = 0; i < 100; i++) {
    const run = await regenerate(h, false);
    if (run.regen.summary.shardsRendered === 0 && i > 0) break;
    sum.runs++;
    sum.ms += run.ms;
    sum.rowsRead += run.regen.rowsRead;
    sum.rowsWritten += run.regen.rowsWritten;
    sum.rendered += run.regen.summary.shardsRendered;
    sum.spliced += run.regen.summary.shardsSpliced;
    sum.blocks += run.regen.summary.blocksRendered;
    sum.statements += run.regen.queries;
    sum.kvOps += Object.values(run.regen.kvOps).reduce((n, v) => n + v, 0);
    sum.kvBulkKeys += run.regen.kvBulkKeys;
    for (const [op, n] of Object.entries(run.regen.kvOps)) sum.kvByOp[op] = (sum.kvByOp[op] ?? 0) + n;
    const p = run.peaks;
    const q = sum.peaks ?? p; // the first run's "before" figures stay
    sum.peaks = {
      ...q,
      worker: Math.max(q.worker, p.worker),
      storage: Math.max(q.storage, p.storage),
      heapUsed: Math.max(q.heapUsed, p.heapUsed),
      heapTotal: Math.max(q.heapTotal, p.heapTotal),
    };
  }
  return sum;
}

/** 100 changed records in one shard, then spread over every shard (each in its own block), a write through the admin API, and (large scales) 1,000. */
export async function incrementalRows(
  h: Harness,
  total: number,
  at: { section: string; shard: string; uncachedPath: string; large: boolean },
  set: (key: string, text: string) => void,
): Promise<void> {
  // 100 changed records (new lastmod through D1RecordWriter), then regeneration runs until quiet.
  const products = Math.round(total * PRODUCTS_SHARE);
  const incremental = async (key: string, start: number, step: number, what: string): Promise<void> => {
    await h.bench("touch", { origin: h.origin, section: at.section, start, count: 100, step, lastmod: `${new Date().toISOString().slice(0, 19)}Z` });
    const cpuBefore = h.workerdCpu();
    const after = await untilQuiet(h);
    // The Worker process's CPU over the runs (the last, empty one included): what rendering and splicing cost it.
    const cpu = h.workerdCpu() - cpuBefore;
    set(
      key,
      `${int(after.rowsRead)} rows read (${int(after.rowsRead / 100)} a change), ${int(after.rowsWritten)} written, ${after.rendered} of ${Math.ceil(products / 50_000)} products shards rendered, ` +
        `${after.spliced} spliced, ${after.blocks} blocks rendered, Worker CPU ${ms(cpu)}${after.blocks > 0 ? ` (${ms(cpu / after.blocks)} a block)` : ""} (${what}; ${after.runs} run${after.runs === 1 ? "" : "s"}, ${ms(after.ms)}, ${after.statements} D1 statements, ${after.kvOps} KV operations: ${Object.entries(
          after.kvByOp,
        )
          .map(([op, n]) => `${op} ${n}`)
          .join(", ")})`,
    );
  };
  await incremental("regenIncrOne", 1_000, 1, "records 1,000–1,099");
  // Every 8,000th record at 1M: 100 changes in 100 different blocks (1,000 URLs each) of 16 shards.
  await incremental("regenIncrSpread", 17, Math.floor(products / 100), `every ${int(Math.floor(products / 100))}th record, each in its own block`);
  if (products >= 50_000) {
    set("writeToServed", await writeToServed(h, { section: at.section, record: 25_000, shard: at.shard, uncachedPath: at.uncachedPath }));
  }
  if (at.large) {
    for (let batch = 0; batch < 10; batch++) {
      await h.bench("touch", {
        origin: h.origin,
        section: at.section,
        start: 29 + batch * 7,
        count: 100,
        step: Math.floor(products / 100),
        lastmod: `${new Date().toISOString().slice(0, 19)}Z`,
      });
    }
    // Until the cron is quiet again: the touched shards may be more than REGEN_MAX_SHARDS per run.
    const after = await untilQuiet(h);
    set(
      "regenIncr1000",
      `${int(after.rowsRead)} rows read, ${after.rendered} of ${Math.ceil(products / 50_000)} products shards rendered (${after.runs} runs, ${ms(after.ms)})`,
    );
  }
}
