/**
 * The entry of mirrors for one invocation (the cron, or a queue message): the MIRROR_SITEMAPS URLs
 * it is given, within one budget they share fairly. An error a mirror's pass cannot handle (an
 * invocation limit, a store failing) is thrown: the job's step fails and is retried.
 *
 * The budget goes round-robin in turns: each mirror that still has work gets an equal share of
 * what is left (a share one leaves unused goes to those after it), and mirrors that used up their
 * turn get another round from what is left then. So a big first mirror never starves the rest:
 * each of n mirrors can always use at least 1/n of the run's requests and records.
 */
import type { Services } from "../services-type.ts";
import { outOfShare, runBudget } from "./budget.ts";
import type { MirrorBudget } from "./deps.ts";
import { shownUrl } from "./failure.ts";
import type { Fetcher } from "./fetch.ts";
import { type MirrorOutcome, runMirror } from "./run.ts";
import { newMirrorState } from "./store.ts";

export interface MirrorRunOptions {
  /**
   * What this invocation may spend on mirrors, shared by the mirrors it runs and taken from as
   * they go (so a caller can pass one budget on to several calls). Default: a fresh one from
   * MIRROR_MAX_REQUESTS_PER_RUN and MIRROR_MAX_RECORDS_PER_RUN (`runBudget`).
   */
  budget?: MirrorBudget;
  /** Only these MIRROR_SITEMAPS URLs (e.g. one queue message per mirror); default: all of them. */
  urls?: readonly string[];
  /** The run's time (ms): a pass tells what it read in this run by it. */
  now?: number;
  /** The outbound fetch to mirrored hosts (default: the global one; tests pass a fake remote). */
  fetch?: Fetcher;
  /** When the run stops sending (ms, wall clock): the job step's time budget. */
  deadline?: number;
  /** What the invocation has used so far: the run stops at its share of the limits. */
  usage?: () => { serviceCalls: number };
}

/**
 * The database a mirror writes to: the one serving its URL's origin when that is a configured
 * site, else the default one (SITE_DATABASES). Records for sites of another database are rejected
 * there and counted.
 */
function ownerOf(url: string, databases: readonly Services[]): Services | undefined {
  const origin = new URL(url).origin;
  return databases.find((s) => s.config.sites.has(origin)) ?? databases[0];
}

/**
 * Mirrors the MIRROR_SITEMAPS URLs into the database of each one's site. `databases`: one services
 * object per D1 database, all of them (the default database is the first). Returns each URL's
 * outcome of its last turn.
 */
export async function mirrorAll(databases: readonly Services[], options: MirrorRunOptions = {}): Promise<Map<string, MirrorOutcome>> {
  const outcomes = new Map<string, MirrorOutcome>();
  const config = databases[0]?.config.mirror;
  if (config === undefined) return outcomes;
  const budget = options.budget ?? runBudget(config);
  if (options.deadline !== undefined) budget.until = options.deadline;
  if (options.usage !== undefined) budget.usage = options.usage;
  const now = options.now ?? Date.now();
  const listed = new Set(config.urls);
  let wanting = (options.urls ?? config.urls).filter((url) => listed.has(url));
  while (wanting.length > 0 && budget.requests > 0 && !outOfShare(budget)) {
    const again: string[] = [];
    for (let i = 0; i < wanting.length && budget.requests > 0; i++) {
      const url = wanting[i]!;
      const left = wanting.length - i;
      const turn: MirrorBudget = {
        requests: Math.ceil(budget.requests / left),
        records: Math.ceil(budget.records / left),
        ...(budget.until === undefined ? {} : { until: budget.until }),
        ...(budget.usage === undefined ? {} : { usage: budget.usage }),
      };
      const given = { ...turn };
      const outcome = await mirrorTurn(url, databases, turn, now, options.fetch);
      outcomes.set(url, outcome);
      budget.requests -= given.requests - turn.requests;
      budget.records -= given.records - turn.records;
      const spent = turn.requests < given.requests || turn.records < given.records;
      // Stopped by its share, not done: another round, from what the others leave.
      if (outcome === "in-progress" && spent && (turn.requests <= 0 || turn.records <= 0)) again.push(url);
    }
    wanting = again;
  }
  return outcomes;
}

async function mirrorTurn(
  url: string,
  databases: readonly Services[],
  turn: MirrorBudget,
  now: number,
  fetch: Fetcher | undefined,
): Promise<MirrorOutcome> {
  const s = ownerOf(url, databases);
  if (!s?.mirrors) return "failed"; // no D1 binding: nowhere to keep a mirror's state
  try {
    if (s.store.sync === null) {
      const state = (await s.mirrors.load(url)) ?? newMirrorState(url);
      await s.mirrors.save({ ...state, checkedAt: now, error: "mirrors need the D1 record source (URL_SOURCE=d1)", errorAt: now });
      return "failed";
    }
    const deps = { config: s.config, sync: s.store.sync, state: s.mirrors, ...(fetch ? { fetch } : {}) };
    const outcome = await runMirror(deps, url, turn, now);
    console.log(JSON.stringify({ event: "sitemap.mirror", url: shownUrl(url), outcome, turnLeft: turn }));
    return outcome;
  } catch (err) {
    // Never swallowed (src/mirror/run.ts): the caller's step fails and is retried.
    console.error("mirror failed", shownUrl(url), err instanceof Error ? err.message : err);
    throw err;
  }
}
