/**
 * The incremental strategy (a store whose change feed is indexed and which scans ranges: D1, KV):
 * reads the change feed since the stored cursor and marks the shard of every changed key
 * (tombstones and section moves included), then re-plans and renders only those shards; or, when
 * there is no usable cursor, runs (or resumes) a site pass over every row.
 *
 * A commit-ordered feed (D1: the cursor carries `seq`) is read up to its head: what commits later
 * is numbered past the cursor whatever its stamp. A stamp-ordered one (KV) keeps its cursor a
 * settle window behind the newest change and skips what it handled past it (`recent`).
 */
import type { ChangeCursor, ChangeFeed, RangeScan } from "../store/port.ts";
import { waiting } from "./failures.ts";
import { type Run, isAfter } from "./run.ts";
import { oneKeyPerBlock, spliceShard } from "./splice.ts";
import type { RegenState } from "./store.ts";
import type { RunSummary } from "./summary.ts";

const CHANGE_PAGE = 5_000;
/** Changes remembered past the cursor (settle window); beyond this the next run re-reads them. */
const RECENT_MAX = 5_000;

/** Change feed + range scans (D1). Updates `state` in place with the cursor and the work left. */
export async function incremental(
  run: Run,
  feed: ChangeFeed,
  scanner: RangeScan,
  state: RegenState,
  fingerprint: string,
  /** Re-plan and re-render every shard (a site pass), whatever the change feed says. */
  full: boolean,
  summary: RunSummary,
): Promise<void> {
  const { config } = run.deps;
  const horizon = run.now - config.regen.settleSeconds * 1000;
  /** The keys this run read changes of, by shard (`section\0firstKey`): a splice re-renders only their blocks. */
  const changedKeys = new Map<string, number[]>();
  /**
   * Whether this run read the change feed to its head. A splice trusts the blocks it does not read
   * to be as stored; a change left unread (the run's bound stopped the read) may be in one of them,
   * so then every changed shard is re-planned from all its rows.
   */
  let feedRead = false;
  /** Shards with work carried over from an earlier run without their changed keys: they are re-planned whole. */
  const carried = new Set<string>();
  const shardId = (section: string, key: number): string => {
    const shard = run.draft.containing(section, key);
    return `${section}\u0000${shard ? shard.entry.firstKey : 0}`;
  };
  const addChange = (section: string, key: number): void => {
    const id = shardId(section, key);
    const keys = changedKeys.get(id);
    if (keys) keys.push(key);
    else changedKeys.set(id, [key]);
  };

  if (!run.published || state.cursor === null || state.fingerprint !== fingerprint || full) {
    // A site pass: every shard re-planned and rendered from one read of every row. The change
    // cursor starts at the head as of now (settled), so changes during the pass are seen later.
    const head = (await feed.changes(run.origin, null, 0)).cursor;
    state.cursor = head.seq !== undefined || head.stamp <= horizon ? head : { stamp: horizon, key: Number.MAX_SAFE_INTEGER, moveSeq: head.moveSeq };
    state.recent = [];
    state.pending = [];
    state.changed = [];
    run.recent.clear();
    state.pass = { section: "", key: 0 };
    state.fingerprint = fingerprint;
  } else {
    // Read what changed since the cursor.
    let cursor: ChangeCursor = state.cursor;
    const touched = new Map<string, [string, number]>();
    for (const [section, key] of state.changed ?? []) addChange(section, key);
    const known = new Set(changedKeys.keys());
    for (const [section, key] of state.pending) {
      touched.set(`${section}\u0000${key}`, [section, key]);
      const id = shardId(section, key);
      if (!known.has(id)) carried.add(id);
    }
    let block = 0;
    for (let first = true; ; first = false) {
      const page = await feed.changes(run.origin, cursor, CHANGE_PAGE);
      // Only a stamp-ordered feed reads changes again, and only it reads a stamp's rows in key
      // order, as the intervals of `recent` need (a cursor saved by stamp is read on by seq).
      const byStamp = page.cursor.seq === undefined;
      if (first && byStamp) for (const interval of state.recent) run.recent.restore(interval);
      run.counters.changesRead += page.rows.length;
      let stamp = Number.NaN;
      block++;
      for (const row of page.rows) {
        if (row.updatedAt !== stamp) block++;
        stamp = row.updatedAt;
        if (byStamp && run.recent.has(row.section, row.key, row.updatedAt)) continue;
        if (byStamp) run.recent.add(row.section, row.key, row.updatedAt, -block);
        const shard = run.draft.containing(row.section, row.key);
        const key = shard ? shard.entry.firstKey : 0;
        touched.set(`${row.section}\u0000${key}`, [row.section, key]);
        if (shard) addChange(row.section, row.key);
      }
      cursor = page.cursor;
      feedRead = page.done;
      if (page.done || run.counters.changesRead >= config.regen.maxRows) break;
    }
    // By stamp, the cursor stays a settle window behind: a write stamped before `horizon` may still
    // commit, so changes newer than that are read again next run, and skipped if handled (`recent`).
    // By commit order it goes where the reading stopped: no later commit is numbered before it.
    const settle: ChangeCursor = { stamp: horizon, key: Number.MAX_SAFE_INTEGER, moveSeq: cursor.moveSeq };
    state.cursor =
      cursor.seq !== undefined || !isAfter(cursor.stamp, cursor.key, settle)
        ? cursor
        : isAfter(settle.stamp, settle.key, state.cursor)
          ? settle
          : { ...state.cursor, moveSeq: cursor.moveSeq };
    state.pending = [...touched.values()];
  }

  // Rows scanned past a stamp cursor are noted as handled; a commit cursor reads nothing again.
  run.track = state.cursor.seq === undefined ? state.cursor : null;

  // Shards to redo: changed ones first, then listed ones with no snapshot yet (no pass running),
  // except those whose store failed and whose retry time has not come.
  const units = new Map<string, [string, number]>();
  for (const [section, key] of state.pending) units.set(`${section}\u0000${key}`, [section, key]);
  if (!state.pass) {
    for (const s of run.draft.all()) {
      if (s.urlCount > 0 && !s.snapshot && !waiting(state.failed, `${s.section}-${s.n}`, run.now)) {
        units.set(`${s.section}\u0000${s.firstKey}`, [s.section, s.firstKey]);
      }
    }
  }
  const left: [string, number][] = [];
  /** Changed keys of the shards left to the next run that it may splice. */
  const leftChanged: [string, number][] = [];
  const done = new Set<string>();
  const ordered = [...units.values()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  for (const [section, key] of ordered) {
    if (run.exhausted()) {
      left.push([section, key]);
      const id = shardId(section, key);
      const keys = changedKeys.get(id);
      const shard = run.draft.containing(section, key);
      if (keys && shard && feedRead && !carried.has(id) && !done.has(id)) {
        done.add(id);
        leftChanged.push(...oneKeyPerBlock(shard.entry, keys).map((k): [string, number] => [section, k]));
      }
      continue;
    }
    const shard = run.draft.containing(section, key);
    const lo = shard ? shard.entry.firstKey : 0;
    const hi = shard ? shard.end : run.draft.entries(section)[0] ? run.draft.entries(section)[0]!.firstKey - 1 : undefined;
    const id = `${section}\u0000${lo}`;
    if (done.has(id)) continue;
    done.add(id);
    // A shard whose changes this run read: its changed blocks only, when its stored file allows (splice.ts).
    const keys = changedKeys.get(id);
    if (shard && keys && feedRead && !carried.has(id) && !state.pass && (await spliceShard(run, scanner, shard.entry, shard.end, keys))) continue;
    const resume = await run.pass(scanner, { section, key: lo }, { hi });
    if (resume) left.push([resume.section, resume.key]);
  }
  if (state.pass && !run.exhausted()) {
    summary.mode = "pass";
    state.pass = await run.pass(scanner, state.pass, null);
  } else if (state.pass) {
    summary.mode = "pass";
  }
  state.pending = left;
  state.changed = leftChanged;
  // Read by the publish: a first pass still under way publishes a partial manifest (publish.ts).
  summary.passPending = state.pass !== null;
  // Rows handled past the cursor (read from the feed or scanned): the next run's re-read skips them.
  const recent = run.track ? run.recent.after(run.track) : [];
  state.recent = recent.length <= RECENT_MAX ? recent : [];
}
