/**
 * Housekeeping: what would only grow is trimmed, in bounded steps, by the per-database sync-sweep
 * job (src/jobs/sync-sweep.ts; docs/jobs.md "Housekeeping", docs/capacity.md "How large each table
 * gets"):
 *
 *  - syncs: abandoned ones expire, what finished ones saw is forgotten at once, and finished ones
 *    themselves after a week (src/sync/sweep.ts);
 *  - section moves (`url_moves`): only the regeneration's change feed reads them, past its cursor,
 *    so those at or before a site's saved regeneration cursor are deleted;
 *  - tombstones: deleted once every notification target of the site has passed them
 *    (notifyLowWatermark) and the regeneration has published them: its cursor was past them when a
 *    run of the housekeeping saw it, longer ago than MANIFEST_CACHE_TTL (and a minute). A run that
 *    moves the cursor past a tombstone publishes a manifest built after it, and from then on no
 *    request looks at the tombstone (a live render checks only rows changed after its manifest was
 *    built: src/http/sitemap-documents.ts rowsStillAt); a location may keep the manifest from before
 *    for MANIFEST_CACHE_TTL, and its renders do look. A shard still to be rendered again needs
 *    nothing of the tombstone either: it is rendered from the live rows of its range;
 *  - rows of the jobs table whose site or mirror is no longer configured (once a day).
 *
 * A run makes at most `maxStatements` D1 statements (each one query of the invocation's 1,000),
 * deletes at most `rowsPerStatement` rows a statement, each statement reading about what it deletes,
 * and takes on no work after its `deadline`.
 * Where a run stopped is saved (table `housekeeping`), and `moreLeft` says that the next run has work
 * waiting: the job's continuation, not the next hourly heartbeat, should run it (a tombstone waiting
 * for a cursor to be seen long enough ago is not: the next hourly run takes it).
 */
import { notifyLowWatermark } from "../notify/notifier.ts";
import { cursorAfter } from "../notify/store.ts";
import type { ChangeStamp } from "../store/port.ts";
import { sweepSyncs } from "../sync/sweep.ts";
import { Budget, type HousekeepingOptions, type HousekeepingReport, type Run, type Unit } from "./run.ts";
import type { JobKey, SavedCursor, SiteLitter } from "./store.ts";

/** D1 statements a run makes at most. */
const MAX_STATEMENTS = 50;
/** Rows one delete statement removes at most (url_moves, tombstones; the syncs' own: src/adapters/d1/sync.ts). */
const ROWS_PER_STATEMENT = 5_000;
/** A database's syncs take at most this many statements of a run. */
const SYNC_STATEMENTS = 20;
/** Sites per read of where their litter starts. */
const LITTER_SITES = 500;
/** The jobs table's walk takes at most this many statements of a run. */
const JOB_STATEMENTS = 10;
/** Rows of the jobs table read per statement. */
const JOB_PAGE = 1_000;
/** Job rows deleted per statement (src/adapters/d1/housekeeping.ts). */
const JOBS_PER_DROP = 49;
/** The jobs table is walked once a day: its rows go stale only when the configuration changes. */
const JOBS_EVERY_MS = 24 * 3600_000;
/** A notifier's low watermark: a read of the site's target states, and of the retired ping endpoints. */
const WATERMARK_STATEMENTS = 2;
/** A regeneration cursor is purged below once seen longer ago than MANIFEST_CACHE_TTL and this. */
const CACHE_MARGIN_SECONDS = 60;

/**
 * Trims what the databases of `units` hold (a database's services, or each partition's of a site over
 * several databases), within one run's budget; a run that stops resumes, next time, where it stopped.
 * Throws what its stores throw (the job is retried; every step is idempotent).
 */
export async function housekeep(units: readonly Unit[], options: HousekeepingOptions): Promise<HousekeepingReport> {
  const run: Run = {
    now: options.now ?? Date.now(),
    rows: options.rowsPerStatement ?? ROWS_PER_STATEMENT,
    budget: new Budget(options.maxStatements ?? MAX_STATEMENTS, options.deadline ?? Number.POSITIVE_INFINITY),
    report: { syncs: 0, seenRows: 0, moves: 0, tombstones: 0, jobs: 0, crawlerFetches: 0, held: 0, statements: 0, moreLeft: false },
    keepJob: options.keepJob,
  };
  const home = units[0]?.housekeeping ?? null;
  const cursorsOf = new Map<number, Map<string, SavedCursor>>();
  // A site over several databases: its partitions in turn, from the one the last run stopped at.
  let start = 0;
  if (units.length > 1 && home) {
    run.budget.used++;
    const cursors = await home.cursors();
    cursorsOf.set(0, cursors);
    start = Number.parseInt(cursors.get("unit")?.cursor ?? "0", 10) % units.length || 0;
  }
  let stoppedAt: number | null = null;
  for (let k = 0; k < units.length; k++) {
    const i = (start + k) % units.length;
    const unit = units[i]!;
    let cursors = cursorsOf.get(i);
    if (!cursors && unit.housekeeping) {
      if (!run.budget.has(1)) {
        stoppedAt = i;
        break;
      }
      run.budget.used++;
      cursors = await unit.housekeeping.cursors();
    }
    if (!(await unitStep(unit, cursors ?? new Map(), run))) {
      stoppedAt = i;
      break;
    }
  }
  // Last, with what the run left: the crawler log is kept in the first database only (a partitioned site's home).
  if (units[0] && !(await trimCrawlerLog(units[0], run))) run.report.moreLeft = true;
  if (stoppedAt !== null) run.report.moreLeft = true;
  const next = stoppedAt ?? 0;
  if (units.length > 1 && home && next !== start) {
    run.budget.used++;
    await home.saveCursor("unit", String(next), run.now);
  }
  run.report.statements = run.budget.used;
  if (Object.entries(run.report).some(([k, v]) => k !== "statements" && k !== "held" && v)) {
    console.log(JSON.stringify({ event: "sitemap.housekeeping", ...run.report }));
  }
  return run.report;
}

/** One database's share: its syncs, its sites' moves and tombstones, its jobs table. false: stopped at the budget. */
async function unitStep(unit: Unit, cursors: Map<string, SavedCursor>, run: Run): Promise<boolean> {
  const { budget, report } = run;
  if (unit.store.sync) {
    const allowed = Math.min(SYNC_STATEMENTS, budget.free());
    if (allowed < 1) return false;
    const swept = await sweepSyncs(unit.store.sync, run.now, allowed);
    budget.used += swept.statements;
    report.syncs += swept.expired + swept.finished + swept.forgotten;
    report.seenRows += swept.seenRows;
    // A huge sync's rows take several runs; the rest of this one goes on meanwhile.
    if (swept.moreLeft) report.moreLeft = true;
  }
  if (!unit.housekeeping) return true;
  // Each part has its own cap and cursor, so that each goes on every run whatever the others leave.
  if (!(await walkJobs(unit, cursors, run))) return false;
  return !unit.regen || trimSites(unit, cursors, run);
}

/**
 * The crawler log's fetches once older than CRAWLER_STALE_DAYS (at least 7 days) and a day: status
 * reads no further back, across the database's sites: one index range, no cursor to keep. false: stopped at the budget.
 */
async function trimCrawlerLog(unit: Unit, run: Run): Promise<boolean> {
  if (!unit.crawlerLog || !unit.housekeeping) return true;
  const before = run.now - (Math.max(unit.config.crawlers.staleDays, 7) + 1) * 86400_000;
  for (;;) {
    if (!run.budget.has(1)) return false;
    run.budget.used++;
    const n = await unit.crawlerLog.trim(before, run.rows);
    run.report.crawlerFetches += n;
    if (n < run.rows) return true;
  }
}

/** Each site's moves and tombstones that no reader needs any more, from the site after the saved one. */
async function trimSites(unit: Unit, cursors: Map<string, SavedCursor>, run: Run): Promise<boolean> {
  const store = unit.housekeeping!;
  const sites = [...unit.config.sites].sort();
  if (sites.length === 0) return true;
  // Named by its first site: a database may hold the sites of one services object and a partition of another site.
  const task = `sites ${sites[0]}`;
  const saved = cursors.get(task)?.cursor ?? "";
  let done = saved;
  const stop = async (): Promise<boolean> => {
    if (done !== saved) {
      run.budget.used++;
      await store.saveCursor(task, done, run.now);
    }
    return false;
  };
  const from = Math.max(0, saved === "" ? 0 : sites.findIndex((s) => s > saved));
  for (let i = from; i < sites.length; i += LITTER_SITES) {
    if (!run.budget.has(1)) return stop();
    run.budget.used++;
    for (const site of await store.litter(sites.slice(i, i + LITTER_SITES))) {
      if ((site.oldestMove !== null || site.oldestTombstone !== null) && !(await trimSite(unit, site, run))) return stop();
      done = site.origin;
    }
  }
  if (saved !== "") {
    run.budget.used++;
    await store.saveCursor(task, "", run.now);
  }
  return true;
}

/**
 * Registered sites' moves and tombstones (src/registry/): each site has services of its own (its
 * notification targets decide its watermark), so the registry sweep (src/jobs/registry-sweep.ts)
 * hands each page of them here, grouped by the database they share: one read of where their litter
 * starts per group, then each site with litter, within `maxStatements`. No position is saved: the
 * sweep passes every site at each heartbeat, and what a run leaves the next one takes.
 */
export async function trimRegistered(
  groups: Iterable<readonly Unit[]>,
  options: Pick<HousekeepingOptions, "now" | "rowsPerStatement" | "deadline"> & { maxStatements: number },
): Promise<HousekeepingReport> {
  const run: Run = {
    now: options.now ?? Date.now(),
    rows: options.rowsPerStatement ?? ROWS_PER_STATEMENT,
    budget: new Budget(options.maxStatements, options.deadline ?? Number.POSITIVE_INFINITY),
    report: { syncs: 0, seenRows: 0, moves: 0, tombstones: 0, jobs: 0, crawlerFetches: 0, held: 0, statements: 0, moreLeft: false },
    keepJob: () => true,
  };
  sites: for (const units of groups) {
    const store = units[0]?.housekeeping;
    if (!store || !units.every((u) => u.regen)) continue;
    const unitOf = new Map(units.map((u) => [[...u.config.sites][0]!, u]));
    for (let i = 0; i < units.length; i += LITTER_SITES) {
      if (!run.budget.has(1)) break sites;
      run.budget.used++;
      for (const site of await store.litter([...unitOf.keys()].slice(i, i + LITTER_SITES))) {
        if ((site.oldestMove !== null || site.oldestTombstone !== null) && !(await trimSite(unitOf.get(site.origin)!, site, run))) {
          run.report.moreLeft = true;
          break sites;
        }
      }
    }
  }
  run.report.statements = run.budget.used;
  return run.report;
}

/** One site: its moves the regeneration has read, its tombstones every reader has passed. false: stopped at the budget. */
async function trimSite(unit: Unit, site: SiteLitter, run: Run): Promise<boolean> {
  const { budget, report, now } = run;
  const store = unit.housekeeping!;
  if (!budget.has(1)) return false;
  budget.used++;
  const regen = await unit.regen!.peek(site.origin);
  const cursor = regen?.state.cursor ?? null;
  // Before its first complete pass the regeneration has read nothing: everything is still needed.
  if (!regen || cursor === null) return true;
  if (site.oldestMove !== null && site.oldestMove <= cursor.moveSeq) {
    for (;;) {
      if (!budget.has(1)) return false;
      budget.used++;
      const n = await store.trimMoves(site.origin, cursor.moveSeq, run.rows);
      report.moves += n;
      if (n < run.rows) break;
    }
  }
  if (site.oldestTombstone === null) return true;
  // A move's catch-up (src/partitions/catch-up.ts) reads the old partitions' deletions from its
  // start until a minute after its flip: none of the site's tombstones go before it has.
  if (unit.layouts) {
    if (!budget.has(1)) return false;
    budget.used++;
    if ((await unit.layouts.read()).catchUp !== null) {
      report.held++;
      return true;
    }
  }
  const seen = seenOf(site.seen);
  // The cursor seen long enough ago: no location can still hold a manifest published before it.
  const old = now - (unit.config.cache.manifestTtl + CACHE_MARGIN_SECONDS) * 1000;
  let changed = false;
  if (seen.next && seen.next.at <= old) {
    const { stamp, key, seq } = seen.next;
    seen.use = seq === undefined ? { stamp, key } : { stamp, key, seq };
    seen.next = null;
    changed = true;
  }
  if (!seen.next && (!seen.use || cursorAfter(cursor, seen.use))) {
    seen.next = { stamp: cursor.stamp, key: cursor.key, ...(cursor.seq === undefined ? {} : { seq: cursor.seq }), at: now };
    changed = true;
  }
  if (changed) {
    if (!budget.has(1)) return false;
    budget.used++;
    await store.saveSite(site.origin, JSON.stringify(seen), now);
  }
  const published = seen.use;
  if (!published || site.oldestTombstone > published.stamp) {
    report.held++;
    return true;
  }
  if (!budget.has(WATERMARK_STATEMENTS + 1)) return false;
  budget.used += WATERMARK_STATEMENTS;
  // Every target has acknowledged the changes stamped before its watermark (stamps are whole
  // milliseconds), and, on a commit-ordered feed, those numbered up to its `seq`: a tombstone goes
  // only once both the regeneration's and every target's cursor passed it in both orders.
  const watermark = await notifyLowWatermark(unit, site.origin, now);
  const stamped: ChangeStamp =
    watermark !== null && watermark.stamp - 1 < published.stamp ? { stamp: watermark.stamp - 1, key: Number.MAX_SAFE_INTEGER } : published;
  const seqs = [published.seq, watermark?.seq ?? undefined].filter((seq) => seq !== undefined);
  const through: ChangeStamp =
    seqs.length > 0 ? { stamp: stamped.stamp, key: stamped.key, seq: Math.min(...seqs) } : { stamp: stamped.stamp, key: stamped.key };
  if (site.oldestTombstone > through.stamp) {
    report.held++;
    return true;
  }
  for (;;) {
    if (!budget.has(1)) return false;
    budget.used++;
    const n = await store.purgeTombstones(site.origin, through, run.rows);
    report.tombstones += n;
    if (n < run.rows) return true;
  }
}

/** The regeneration cursors the housekeeping saw of a site: the one it purges below, and the next one, with when it saw it. */
interface Seen {
  use: ChangeStamp | null;
  next: (ChangeStamp & { at: number }) | null;
}

function seenOf(text: string | null): Seen {
  try {
    const seen = text === null ? null : (JSON.parse(text) as Partial<Seen>);
    return { use: seen?.use ?? null, next: seen?.next ?? null };
  } catch {
    return { use: null, next: null };
  }
}

/**
 * Rows of the jobs table whose site or mirror is gone, once a day, from where the last walk stopped,
 * in at most JOB_STATEMENTS statements. false: the run's budget is spent.
 */
async function walkJobs(unit: Unit, cursors: Map<string, SavedCursor>, run: Run): Promise<boolean> {
  const store = unit.housekeeping!;
  const { budget } = run;
  const saved = cursors.get("jobs");
  if (saved && saved.cursor === "" && run.now - saved.at < JOBS_EVERY_MS) return true;
  const cap = budget.used + JOB_STATEMENTS;
  const fits = () => budget.has(1) && budget.used < cap;
  let after = saved && saved.cursor !== "" ? parseJobKey(saved.cursor) : null;
  walk: for (;;) {
    if (!fits()) break;
    budget.used++;
    const page = await store.jobs(after, JOB_PAGE);
    const stale = page.filter((row) => !run.keepJob(row.kind, row.origin));
    for (let i = 0; i < stale.length; i += JOBS_PER_DROP) {
      // A page not wholly handled is read again by the next run.
      if (!fits()) break walk;
      budget.used++;
      run.report.jobs += await store.dropJobs(stale.slice(i, i + JOBS_PER_DROP), run.now);
    }
    if (page.length < JOB_PAGE) {
      budget.used++;
      await store.saveCursor("jobs", "", run.now);
      return true;
    }
    after = page[page.length - 1]!;
  }
  // Stopped: the next run goes on after the last page handled (none handled: from where this one began).
  run.report.moreLeft = true;
  const cursor = after === null ? null : JSON.stringify([after.kind, after.origin]);
  if (cursor !== null && cursor !== saved?.cursor) {
    budget.used++;
    await store.saveCursor("jobs", cursor, run.now);
  }
  return budget.has(1);
}

function parseJobKey(text: string): JobKey | null {
  try {
    const [kind, origin] = JSON.parse(text) as unknown[];
    return typeof kind === "string" && typeof origin === "string" ? { kind, origin } : null;
  } catch {
    return null;
  }
}
