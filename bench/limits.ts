/**
 * Per-invocation limits, as the benches meet them: every metered `/__bench/*` route runs as one
 * invocation under the real entry's enforcing meter (bench/worker/metering.ts, src/jobs/meter.ts)
 * and answers what it used. The harness records each answer here under the path it stands for
 * (a regeneration run, a move step, a write batch, a request), and `npm run bench` prints, per path,
 * bench and scale, the largest invocation's D1 queries, KV operations, subrequests and wall time
 * against Workers Paid's limits; an invocation the meter stopped is printed as such.
 */
import { int, ms } from "./lib.ts";

/** What a metered route answers as `usage`. */
export interface InvocationUsage {
  d1Queries: number;
  kvOperations: number;
  queueSends: number;
  serviceCalls: number;
  subrequests: number;
  durationMs: number;
  /** The first InvocationLimitError the meter threw in the invocation (the product may have caught it). */
  limitHit: string | null;
  /** The limits the meter enforced (src/jobs/meter.ts PAID_LIMITS: Workers Paid). */
  limits: Limits;
}

interface Limits {
  serviceCalls: number;
  subrequests: number;
}

interface Largest {
  invocations: number;
  d1Queries: number;
  kvOperations: number;
  serviceCalls: number;
  subrequests: number;
  durationMs: number;
  /** Invocations the meter stopped, and the first one's error. */
  stopped: number;
  firstStop: string | null;
}

/** "10k", "1M", "100M": how the tables name a scale. */
export function scaleLabel(records: number): string {
  return records >= 1_000_000 ? `${records / 1_000_000}M` : `${records / 1_000}k`;
}

let context = { bench: "", scale: "" };
/** The limits the invocations ran under (the same for all: the meter's defaults). */
let limits: Limits | null = null;
const largest = new Map<string, Largest>();
const order: string[] = [];

/** Which bench and scale the invocations recorded next belong to. */
export function limitsContext(bench: string, records: number): void {
  context = { bench, scale: scaleLabel(records) };
}

/** The path a bench route stands for, from its route and parameters. */
export function pathOf(route: string, params: Record<string, string | number>): string {
  const count = params["count"] === undefined ? "" : ` of ${int(Number(params["count"]))} records`;
  switch (route) {
    case "regen":
      return params["full"] === 1 || params["full"] === "1"
        ? "regeneration run, site pass (one regenerate job step)"
        : "regeneration run (one regenerate job step)";
    case "p/regen":
      return "regeneration run of one partition (one regenerate job step)";
    case "touch":
      return `write batch${count}${params["store"] === "configured" ? " through the site's writer object" : " (D1RecordWriter)"}`;
    case "p/touch":
      return `write batch${count} through the partitioned site's writer`;
    case "p/rebalance":
      return params["now"] === undefined ? "move step (one rebalance job step)" : "purge step (one rebalance job step, a day after the flip)";
    case "rebuild":
      return `whole-site manifest walk in one invocation (rebuildManifest${params["store"] === "configured" ? ", the configured store" : ", D1"}; no product path since issue 41)`;
    case "count":
      return `request GET ${String(params["path"])}`;
    case "read":
      return "live render's D1 reads alone (a shard, records discarded)";
    case "render-d1":
      return "live render without HTTP (D1 reader → render → gzip)";
    case "render":
      return "render of in-memory records (no bindings)";
    default:
      return `/__bench/${route}`;
  }
}

/** Records one invocation's usage under `path` in the current bench and scale. */
export function recordInvocation(path: string, usage: InvocationUsage): void {
  const key = JSON.stringify([context.bench, path, context.scale]);
  let entry = largest.get(key);
  if (!entry) {
    entry = { invocations: 0, d1Queries: 0, kvOperations: 0, serviceCalls: 0, subrequests: 0, durationMs: 0, stopped: 0, firstStop: null };
    largest.set(key, entry);
    order.push(key);
  }
  limits ??= usage.limits;
  entry.invocations++;
  entry.d1Queries = Math.max(entry.d1Queries, usage.d1Queries);
  entry.kvOperations = Math.max(entry.kvOperations, usage.kvOperations);
  entry.serviceCalls = Math.max(entry.serviceCalls, usage.serviceCalls);
  entry.subrequests = Math.max(entry.subrequests, usage.subrequests);
  entry.durationMs = Math.max(entry.durationMs, usage.durationMs);
  if (usage.limitHit) {
    entry.stopped++;
    entry.firstStop ??= usage.limitHit;
  }
}

const cell = (text: string): string => text.replaceAll("|", "\\|");
const against = (value: number, limit: number): string => `${int(value)} (${((100 * value) / limit).toFixed(value < limit / 100 ? 1 : 0)} %)`;

/** The table `npm run bench` prints last (empty when no metered route ran). */
export function limitsTable(): string {
  if (order.length === 0 || limits === null) return "";
  const PAID_LIMITS = limits;
  const lines = [
    "### Per-invocation limits: the largest invocation of each path (enforced: Workers Paid)",
    "",
    `Each metered bench route is one invocation under the real entry's meter (src/jobs/meter.ts), which throws InvocationLimitError as production does past ${int(PAID_LIMITS.serviceCalls)} calls to D1, KV and the other Cloudflare services together (each statement of a batch counted) or ${int(PAID_LIMITS.subrequests)} subrequests (every binding call, queue send and fetch). Each column is the largest of the path's invocations (% of the limit); wall time is the invocation's (Date.now in workerd), against a job step's budget of 30 s (half of limits.cpu_ms). "stopped": invocations the meter stopped.`,
    "",
    `| Bench | Path | Records | Invocations | D1 queries | KV operations | Service calls (≤ ${int(PAID_LIMITS.serviceCalls)}) | Subrequests (≤ ${int(PAID_LIMITS.subrequests)}) | Wall | Within the limits |`,
    "|---|---|---|---:|---:|---:|---:|---:|---:|:-:|",
  ];
  for (const key of order) {
    const [bench, path, scale] = JSON.parse(key) as [string, string, string];
    const e = largest.get(key)!;
    const within = e.stopped === 0 ? "✅" : `❌ ${e.stopped} stopped: ${e.firstStop}`;
    lines.push(
      `| ${cell(bench)} | ${cell(path)} | ${scale} | ${int(e.invocations)} | ${int(e.d1Queries)} | ${int(e.kvOperations)} | ${against(e.serviceCalls, PAID_LIMITS.serviceCalls)} | ${against(e.subrequests, PAID_LIMITS.subrequests)} | ${ms(e.durationMs)} | ${cell(within)} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}
