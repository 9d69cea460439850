/** The structured summary of one run: built as the run goes, logged, kept for GET /sitemap-admin/status. */
import type { RunCounters } from "./counters.ts";

/** Structured summary of one run (logged, kept for GET /sitemap-admin/status). */
export interface RunSummary {
  origin: string;
  trigger: string;
  startedAt: string;
  durationMs: number;
  /** incremental: change feed + range scans; pass: a site pass ran; walk: key rows re-planned (feed not indexed, or no scan). */
  mode: "incremental" | "pass" | "walk";
  changesRead: number;
  /** Shards whose rows were read (planned and rendered). */
  shardsChecked: number;
  /** Shards rendered into a new snapshot. */
  shardsRendered: number;
  /** Shards rendered whose version turned out unchanged (snapshot already stored). */
  shardsUnchanged: number;
  /** Renders repeated because the first guessed the shard's extension namespaces wrong. */
  rerenders: number;
  /** Shards changed by re-rendering only their changed blocks (src/regen/splice.ts), and those blocks. */
  shardsSpliced: number;
  blocksRendered: number;
  indexRendered: boolean;
  /** Record rows read (change feed + scans). */
  rowsRead: number;
  /** gzip bytes stored (shards + index) and their uncompressed size. */
  bytesStored: number;
  xmlBytes: number;
  published: boolean;
  previousVersion: string | null;
  manifestVersion: string | null;
  /** `section-n` of every listed shard whose version changed (or that is new or gone). */
  changed: string[];
  /** Shards left for the next run, and whether a site pass is still under way. */
  pendingShards: number;
  passPending: boolean;
  /** Nothing left to do as far as this run knows. */
  converged: boolean;
  snapshotsDeleted: number;
  /** Documents published without a snapshot because rendering or storing it failed in this run. */
  failed: { document: string; error: string }[];
  /** What the invocation had used of its budget when the run ended (counted at the bindings by the job, src/jobs/meter.ts). */
  usage?: { d1Queries: number; kvOperations: number; queueSends: number; serviceCalls: number; durationMs: number };
  error?: string;
}

export function newSummary(origin: string, trigger: string, startedAt: number): RunSummary {
  return {
    origin,
    trigger,
    startedAt: new Date(startedAt).toISOString(),
    durationMs: 0,
    mode: "incremental",
    changesRead: 0,
    shardsChecked: 0,
    shardsRendered: 0,
    shardsUnchanged: 0,
    rerenders: 0,
    shardsSpliced: 0,
    blocksRendered: 0,
    indexRendered: false,
    rowsRead: 0,
    bytesStored: 0,
    xmlBytes: 0,
    published: false,
    previousVersion: null,
    manifestVersion: null,
    changed: [],
    pendingShards: 0,
    passPending: false,
    converged: false,
    snapshotsDeleted: 0,
    failed: [],
  };
}

/** One JSON line per run (at most 50 changed shards named). */
export function logSummary(summary: RunSummary): void {
  const line = JSON.stringify({ event: "sitemap.regeneration", ...summary, changed: summary.changed.slice(0, 50) });
  if (summary.error) console.error(line);
  else console.log(line);
}

/** Copies a run's counters into its summary. */
export function countInto(summary: RunSummary, run: RunCounters): void {
  summary.shardsChecked = run.shardsChecked;
  summary.shardsRendered = run.shardsRendered;
  summary.shardsUnchanged = run.shardsUnchanged;
  summary.rerenders = run.rerenders;
  summary.shardsSpliced = run.shardsSpliced;
  summary.blocksRendered = run.blocksRendered;
  summary.rowsRead = run.rowsRead + run.changesRead;
  summary.changesRead = run.changesRead;
  summary.bytesStored = run.bytesStored;
  summary.xmlBytes = run.xmlBytes;
}
