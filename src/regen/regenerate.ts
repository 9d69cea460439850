/**
 * The regeneration (cron, or POST /sitemap-admin/regenerate): brings a site's pre-rendered
 * snapshots and manifest up to date with its records, doing only what changed, within a bounded
 * amount of work per run, and safe to kill at any point. See docs/regeneration.md.
 *
 * One run:
 *  1. takes the site's lease (one run per site at a time);
 *  2. reads the change feed since the stored cursor and marks the shard of every changed key
 *     (tombstones and section moves included) — unchanged shards cost no record reads;
 *  3. re-plans and renders each marked shard in ONE pass over its rows: the same rows feed the
 *     planner (boundaries, splits, version) and the renderer, so a full regeneration reads each
 *     row once; each rendered shard is gzipped and stored under a content-addressed key;
 *  4. renders and stores the index, then publishes the new manifest with one D1 write — the
 *     switch — and only then saves its cursor and the work left; a run killed before the switch
 *     leaves the previous manifest and every snapshot it names untouched;
 *  5. marks superseded snapshots, and deletes those superseded longer than the grace time ago.
 *
 * The work bound (REGEN_MAX_SHARDS, REGEN_MAX_ROWS) is checked at shard boundaries; what is left
 * is persisted (shards to redo, or where a site pass resumes) and the next run continues.
 */
import { EmptySitemapError } from "../core/errors.ts";
import type { UrlRecord } from "../core/types.ts";
import { type BuildOptions, buildManifest, planLimits } from "../manifest/build.ts";
import { type PlanLimits, SectionPlanner, type ShardEntry, type ShardManifest, listedShards, manifestVersion } from "../manifest/manifest.ts";
import { type SitemapDeps, indexExtras, indexMeta, manifestBuildOptions, renderIndex, renderShard } from "../sitemaps.ts";
import { type CompressedDocument, type SnapshotStore, compressDocument, indexSnapshotKey, shardSnapshotKey } from "../snapshots/store.ts";
import type { ChangeCursor, ChangeFeed, RangeScan, ScanPosition, ScannedRecord } from "../store/port.ts";
import { RecentChanges } from "./recent.ts";
import type { Lease, RegenState, RegenStore } from "./store.ts";

export interface RegenDeps extends SitemapDeps {
  snapshots: SnapshotStore;
  state: RegenStore;
}

export interface RegenOptions {
  /** What started the run (logged): "cron", "admin", … */
  trigger?: string;
  /** Re-plan and re-render every shard (a site pass), ignoring what the change feed says. */
  full?: boolean;
  /** Clock (ms). */
  now?: () => number;
  /** After a publish: the Cache-Tags of the documents that changed (to purge shared caches). */
  onPublished?: (tags: { index: boolean; shards: { section: string; n: number }[] }) => Promise<void> | void;
}

/** Structured summary of one run (logged, kept for GET /sitemap-admin/status). */
export interface RunSummary {
  origin: string;
  trigger: string;
  startedAt: string;
  durationMs: number;
  /** incremental: change feed + range scans; pass: a site pass ran; walk: a source without change feed. */
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
  error?: string;
}

export class RegenBusyError extends Error {
  override readonly name = "RegenBusyError";
}

/** A run's lease outlives the longest possible cron invocation (15 min) with a margin. */
const LEASE_MS = 20 * 60_000;
const CHANGE_PAGE = 5_000;
/** Changes remembered past the cursor (settle window); beyond this the next run re-reads them. */
const RECENT_MAX = 5_000;
/** Snapshots deleted per run (KV operations per invocation are limited to 1,000). */
const GC_PER_RUN = 100;

/** Whether change (stamp, key) comes after a cursor position. */
const isAfter = (stamp: number, key: number, c: ChangeCursor): boolean => stamp > c.stamp || (stamp === c.stamp && key > c.key);

/** The manifest being updated: shards per section, in key order. */
class Working {
  readonly #sections = new Map<string, ShardEntry[]>();

  constructor(shards: readonly ShardEntry[]) {
    for (const shard of shards) this.#list(shard.section).push({ ...shard });
    for (const list of this.#sections.values()) list.sort((a, b) => a.firstKey - b.firstKey);
  }

  #list(section: string): ShardEntry[] {
    let list = this.#sections.get(section);
    if (!list) this.#sections.set(section, (list = []));
    return list;
  }

  entries(section: string): readonly ShardEntry[] {
    return this.#sections.get(section) ?? [];
  }

  sections(): string[] {
    return [...this.#sections.keys()].sort();
  }

  /** The shard whose range holds `key`, and where that range ends (undefined: open-ended). */
  containing(section: string, key: number): { entry: ShardEntry; end: number | undefined } | undefined {
    const list = this.entries(section);
    let i = list.length - 1;
    while (i >= 0 && list[i]!.firstKey > key) i--;
    if (i < 0) return undefined;
    const next = list[i + 1];
    return { entry: list[i]!, end: next ? next.firstKey - 1 : undefined };
  }

  maxN(section: string): number {
    return this.entries(section).reduce((max, s) => Math.max(max, s.n), 0);
  }

  /** OR of the section's extension kinds: the guess for a new shard's namespaces. */
  kinds(section: string): number {
    return this.entries(section).reduce((all, s) => all | (s.extKinds ?? 0), 0);
  }

  /** Replaces the shards with first keys in [lo, hi] by `shards`. */
  replace(section: string, lo: number, hi: number, shards: readonly ShardEntry[]): void {
    const kept = this.entries(section).filter((s) => s.firstKey < lo || s.firstKey > hi);
    const merged = [...kept, ...shards].sort((a, b) => a.firstKey - b.firstKey);
    this.#sections.set(section, merged);
  }

  all(): ShardEntry[] {
    return this.sections().flatMap((section) => [...this.entries(section)]);
  }
}

interface SectionRun {
  name: string;
  lo: number;
  /** Last key of the range (undefined: to the end of the section). */
  hi: number | undefined;
  planner: SectionPlanner;
  flushed: number;
  renders: Map<number, { doc: CompressedDocument | null; kinds: number }>;
}

class Run {
  readonly deps: RegenDeps;
  readonly origin: string;
  readonly now: number;
  readonly build: BuildOptions;
  readonly limits: PlanLimits;
  readonly working: Working;
  readonly stored: ShardManifest | null;
  shardsChecked = 0;
  shardsRendered = 0;
  shardsUnchanged = 0;
  rerenders = 0;
  rowsRead = 0;
  changesRead = 0;
  bytesStored = 0;
  xmlBytes = 0;
  readonly storedKeys: string[] = [];
  /** Rows scanned past this cursor are remembered as handled (see RegenState.recent). */
  track: ChangeCursor | null = null;
  readonly recent = new RecentChanges();
  #block = 0;
  #previous = "";

  constructor(deps: RegenDeps, origin: string, now: number, stored: ShardManifest | null, working: Working) {
    this.deps = deps;
    this.origin = origin;
    this.now = now;
    this.stored = stored;
    this.working = working;
    this.build = manifestBuildOptions(deps.config, origin);
    this.limits = planLimits(this.build);
  }

  exhausted(): boolean {
    const { maxShards, maxRows } = this.deps.config.regen;
    return this.shardsChecked > 0 && (this.shardsChecked >= maxShards || this.rowsRead >= maxRows);
  }

  async store(entry: ShardEntry, doc: CompressedDocument): Promise<void> {
    const key = shardSnapshotKey(this.origin, entry.section, entry.n, entry.version);
    await this.deps.state.tentative(this.origin, key, this.now);
    await this.deps.snapshots.put(key, doc.gzip, { version: entry.version, xmlBytes: doc.xmlBytes, gzBytes: doc.gzip.byteLength, storedAt: this.now });
    entry.snapshot = key;
    this.storedKeys.push(key);
    this.shardsRendered++;
    this.bytesStored += doc.gzip.byteLength;
    this.xmlBytes += doc.xmlBytes;
  }

  openSection(name: string, lo: number, hi: number | undefined): SectionRun {
    const previous = this.working.entries(name).filter((s) => s.firstKey >= lo && (hi === undefined || s.firstKey <= hi));
    const planner = new SectionPlanner(name, previous, this.limits, this.build.renderFingerprint, this.now, this.working.maxN(name) + 1);
    return { name, lo, hi, planner, flushed: 0, renders: new Map() };
  }

  /** Stores the snapshots of the shards the planner closed since the last flush. */
  async flush(run: SectionRun): Promise<void> {
    const closed = run.planner.closed;
    for (; run.flushed < closed.length; run.flushed++) {
      const entry = closed[run.flushed]!;
      const render = run.renders.get(entry.n);
      run.renders.delete(entry.n);
      if (entry.urlCount === 0) continue;
      if (entry.snapshot) {
        this.shardsUnchanged++;
        continue;
      }
      let doc = render?.doc ?? null;
      if (!doc || render!.kinds !== (entry.extKinds ?? 0)) {
        // The head declared other namespaces than the shard turned out to use: render again
        // from the source with the final entry (rare: a shard gaining or losing an extension).
        doc = await compressDocument(renderShard(this.deps, this.origin, entry));
        this.rerenders++;
        this.rowsRead += entry.urlCount;
      }
      await this.store(entry, doc);
    }
  }

  async closeSection(run: SectionRun): Promise<void> {
    run.planner.finish(run.hi);
    await this.flush(run);
    this.working.replace(run.name, run.lo, run.hi ?? Number.POSITIVE_INFINITY, run.planner.closed);
  }

  /**
   * One pass over a key range, planning and rendering from the same rows. `single`: the range is
   * one shard's (ends at `hi`, or open-ended); otherwise a site pass from `from` to the end.
   * Returns where the rest of the range resumes when the work bound stopped it, else null.
   */
  async pass(scanner: RangeScan, from: ScanPosition, single: { hi: number | undefined } | null): Promise<ScanPosition | null> {
    const until = single ? { section: from.section, key: single.hi ?? Number.MAX_SAFE_INTEGER } : null;
    const iterator = scanner.scan(this.origin, from, until)[Symbol.asyncIterator]();
    this.#previous = "";
    const pull = async (): Promise<ScannedRecord | undefined> => {
      const next = await iterator.next();
      if (next.done) return undefined;
      this.rowsRead++;
      const row = next.value;
      if (this.track && isAfter(row.updatedAt, row.key, this.track)) {
        // A block is a run of rows of one section and stamp read one after the other.
        const id = `${row.section}\u0000${row.updatedAt}`;
        if (id !== this.#previous) this.#block++;
        this.#previous = id;
        this.recent.add(row.section, row.key, row.updatedAt, this.#block);
      }
      return row;
    };
    const loFor = (section: string): number => (section === from.section ? from.key : 0);
    /** A site pass closes sections that have shards but no rows left (all moved away). */
    const closeEmpty = async (after: string | null, before: string | null): Promise<void> => {
      if (single) return;
      for (const name of this.working.sections()) {
        if (after === null ? name < from.section : name <= after) continue;
        if (before !== null && name >= before) continue;
        const lo = loFor(name);
        if (!this.working.entries(name).some((s) => s.firstKey >= lo)) continue;
        await this.closeSection(this.openSection(name, lo, undefined));
      }
    };

    const cursor: { next: ScannedRecord | undefined } = { next: undefined };
    let current: SectionRun | undefined;
    try {
      cursor.next = await pull();
      while (cursor.next) {
        const first: ScannedRecord = cursor.next;
        if (!current || first.section !== current.name) {
          if (current) await this.closeSection(current);
          await closeEmpty(current?.name ?? null, first.section);
          if (current && this.exhausted()) return { section: first.section, key: 0 };
          current = this.openSection(first.section, loFor(first.section), single?.hi);
        } else if (this.exhausted()) {
          // `first` starts a new shard of this section: stop here, the rest is for the next run.
          const stop = current.planner.stopBefore(first, current.hi);
          await this.flush(current);
          this.working.replace(current.name, current.lo, stop.resumeKey - 1, current.planner.closed);
          return { section: current.name, key: stop.resumeKey };
        }
        const section = current;
        section.planner.add(first);
        await this.flush(section);
        const n = section.planner.openShardNumber!;
        const previous = this.working.entries(section.name).find((s) => s.n === n);
        const kinds = previous?.extKinds ?? this.working.kinds(section.name);
        cursor.next = undefined;
        let live = 0;
        let complete = false;
        async function* rows(): AsyncGenerator<UrlRecord> {
          if (!first.deleted) {
            live++;
            yield first;
          }
          for (;;) {
            const row = await pull();
            if (!row) break;
            if (row.section !== section.name || section.planner.startsNewShard(row)) {
              cursor.next = row;
              break;
            }
            section.planner.add(row);
            if (!row.deleted) {
              live++;
              yield row;
            }
          }
          complete = true;
        }
        const shape: ShardEntry = { section: section.name, n, firstKey: first.key, lastKey: first.key, urlCount: 0, byteCount: 0, lastChange: 0, version: "", extKinds: kinds };
        this.shardsChecked++;
        let doc: CompressedDocument | null = null;
        try {
          doc = await compressDocument(renderShard(this.deps, this.origin, shape, rows()));
        } catch (err) {
          // Only tombstones in this shard (EmptySitemapError): nothing to render; it is kept empty
          // and unlisted. Any other failure fails the run before anything is published.
          if (!(complete && live === 0 && err instanceof EmptySitemapError)) throw err;
        }
        section.renders.set(n, { doc, kinds });
      }
      if (current) await this.closeSection(current);
      else if (single) await this.closeSection(this.openSection(from.section, from.key, single.hi));
      await closeEmpty(current?.name ?? null, null);
      return null;
    } finally {
      await iterator.return?.();
    }
  }
}

function planFingerprint(build: BuildOptions): string {
  return `${build.renderFingerprint}|${build.indexFingerprint}|${build.maxUrls}|${build.maxBytes}`;
}

function sameShards(a: readonly ShardEntry[], b: readonly ShardEntry[]): boolean {
  if (a.length !== b.length) return false;
  const key = (s: ShardEntry): string =>
    [s.section, s.n, s.firstKey, s.lastKey, s.urlCount, s.byteCount, s.lastChange, s.version, s.extKinds ?? 0, s.snapshot ?? ""].join("\u0000");
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.every((k, i) => k === right[i]);
}

/** Regenerates one site. Throws RegenBusyError when another run holds the site's lease. */
export async function regenerateSite(deps: RegenDeps, origin: string, options: RegenOptions = {}): Promise<RunSummary> {
  const clock = options.now ?? Date.now;
  const startedAt = clock();
  const lease = await deps.state.acquire(origin, startedAt, LEASE_MS);
  if (!lease) throw new RegenBusyError(`a regeneration of ${origin} is already running`);
  const summary: RunSummary = {
    origin,
    trigger: options.trigger ?? "manual",
    startedAt: new Date(startedAt).toISOString(),
    durationMs: 0,
    mode: "incremental",
    changesRead: 0,
    shardsChecked: 0,
    shardsRendered: 0,
    shardsUnchanged: 0,
    rerenders: 0,
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
  };
  const progress: { run?: Run } = {};
  try {
    await runOnce(deps, origin, options, startedAt, lease, summary, progress);
    summary.durationMs = clock() - startedAt;
    log(summary);
    await deps.state.recordRun(origin, startedAt, true, summary);
    return summary;
  } catch (err) {
    summary.error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (progress.run) count(summary, progress.run);
    summary.durationMs = clock() - startedAt;
    log(summary);
    await deps.state.recordRun(origin, startedAt, false, summary).catch(() => undefined);
    throw err;
  } finally {
    await deps.state.release(origin, lease).catch(() => undefined);
  }
}

function log(summary: RunSummary): void {
  const line = JSON.stringify({ event: "sitemap.regeneration", ...summary, changed: summary.changed.slice(0, 50) });
  if (summary.error) console.error(line);
  else console.log(line);
}

/** Copies a run's counters into its summary. */
function count(summary: RunSummary, run: Run): void {
  summary.shardsChecked = run.shardsChecked;
  summary.shardsRendered = run.shardsRendered;
  summary.shardsUnchanged = run.shardsUnchanged;
  summary.rerenders = run.rerenders;
  summary.rowsRead = run.rowsRead + run.changesRead;
  summary.changesRead = run.changesRead;
  summary.bytesStored = run.bytesStored;
  summary.xmlBytes = run.xmlBytes;
}

async function runOnce(
  deps: RegenDeps,
  origin: string,
  options: RegenOptions,
  now: number,
  lease: Lease,
  summary: RunSummary,
  progress: { run?: Run },
): Promise<void> {
  const { config, store } = deps;
  const state: RegenState = await deps.state.load(origin);
  const stored = await deps.manifests.load(origin);
  summary.previousVersion = stored?.version ?? null;
  const build = manifestBuildOptions(config, origin);
  const fingerprint = planFingerprint(build);

  let run: Run;
  if (store.changes.indexed && store.scan !== null) {
    run = new Run(deps, origin, now, stored, new Working(stored?.shards ?? []));
    progress.run = run;
    await incremental(run, store.changes, store.scan, state, fingerprint, options, summary);
  } else {
    // A change feed that walks the site (KV) or no range scan: re-plan by walking the key rows
    // (one index pass), then render the shards whose version has no snapshot yet.
    summary.mode = "walk";
    const planned = await buildManifest(store.reader, origin, stored, { ...build, now });
    run = new Run(deps, origin, now, stored, new Working(planned.shards));
    progress.run = run;
    await walk(run);
    state.fingerprint = fingerprint;
  }

  // Publish: index snapshot first, then the manifest (the switch), then the state.
  const shards = run.working.all();
  const version = manifestVersion(shards, build.indexFingerprint);
  const manifest: ShardManifest = { origin, version, builtAt: now, snapshot: null, shards };
  let indexKey: string | null = null;
  if (listedShards(manifest).length > 0) {
    const extras = await indexExtras(deps, manifest, now);
    const meta = indexMeta(manifest, extras);
    indexKey = indexSnapshotKey(origin, meta.version);
    if (stored?.snapshot !== indexKey) {
      const doc = await compressDocument(renderIndex(config, manifest, extras));
      await deps.state.tentative(origin, indexKey, now);
      await deps.snapshots.put(indexKey, doc.gzip, { version: meta.version, xmlBytes: doc.xmlBytes, gzBytes: doc.gzip.byteLength, storedAt: now });
      run.storedKeys.push(indexKey);
      run.bytesStored += doc.gzip.byteLength;
      run.xmlBytes += doc.xmlBytes;
      summary.indexRendered = true;
    }
  }
  manifest.snapshot = indexKey;
  const publish = !stored || stored.version !== version || stored.snapshot !== indexKey || !sameShards(stored.shards, shards);
  if (publish) {
    await deps.manifests.save(manifest);
    summary.published = true;
  }
  summary.manifestVersion = manifest.version;
  if (!(await deps.state.save(origin, lease, { ...state, fingerprint: state.fingerprint }, now))) {
    throw new Error("lost the regeneration lease before saving progress (the run took longer than the lease)");
  }

  // Changes for caches and the summary.
  const before = new Map((stored?.shards ?? []).filter((s) => s.urlCount > 0).map((s) => [`${s.section}-${s.n}`, s.version]));
  const after = new Map(listedShards(manifest).map((s) => [`${s.section}-${s.n}`, s.version]));
  for (const [name, v] of after) if (before.get(name) !== v) summary.changed.push(name);
  for (const name of before.keys()) if (!after.has(name)) summary.changed.push(name);
  summary.changed.sort();

  // Snapshots: confirm what the manifest now references, supersede what it no longer does, and
  // delete what was superseded (or stored and never published) longer than the grace time ago.
  const referenced = new Set<string>([...(manifest.snapshot ? [manifest.snapshot] : []), ...shards.flatMap((s) => (s.snapshot ? [s.snapshot] : []))]);
  if (publish && stored) {
    const superseded = [stored.snapshot, ...stored.shards.map((s) => s.snapshot)].filter((k): k is string => !!k && !referenced.has(k));
    await deps.state.supersede(origin, [...new Set(superseded)], now);
  }
  await deps.state.confirm(run.storedKeys.filter((k) => referenced.has(k)));
  const due = await deps.state.due(origin, now - config.regen.snapshotGraceSeconds * 1000, GC_PER_RUN);
  const doomed = due.filter((k) => !referenced.has(k));
  for (const key of doomed) await deps.snapshots.delete(key);
  await deps.state.forget(due);
  summary.snapshotsDeleted = doomed.length;

  if (publish && options.onPublished && summary.changed.length + (summary.indexRendered ? 1 : 0) > 0) {
    const shardsChanged = summary.changed.map((name) => {
      const cut = name.lastIndexOf("-");
      return { section: name.slice(0, cut), n: Number(name.slice(cut + 1)) };
    });
    await options.onPublished({ index: stored?.snapshot !== indexKey, shards: shardsChanged });
  }

  count(summary, run);
  summary.pendingShards = state.pending.length;
  summary.passPending = state.pass !== null;
  summary.converged = summary.pendingShards === 0 && !summary.passPending && (summary.mode === "walk" ? !listedShards(manifest).some((s) => !s.snapshot) : true);
}

/** Change feed + range scans (D1). Updates `state` in place with the cursor and the work left. */
async function incremental(
  run: Run,
  feed: ChangeFeed,
  scanner: RangeScan,
  state: RegenState,
  fingerprint: string,
  options: RegenOptions,
  summary: RunSummary,
): Promise<void> {
  const { config } = run.deps;
  const horizon = run.now - config.regen.settleSeconds * 1000;

  if (!run.stored || state.cursor === null || state.fingerprint !== fingerprint || options.full) {
    // A site pass: every shard re-planned and rendered from one read of every row. The change
    // cursor starts at the head as of now (settled), so changes during the pass are seen later.
    const head = (await feed.changes(run.origin, null, 0)).cursor;
    state.cursor = head.stamp <= horizon ? head : { stamp: horizon, key: Number.MAX_SAFE_INTEGER, moveSeq: head.moveSeq };
    state.recent = [];
    state.pending = [];
    run.recent.clear();
    state.pass = { section: "", key: 0 };
    state.fingerprint = fingerprint;
  } else {
    // Read what changed since the cursor.
    for (const interval of state.recent) run.recent.restore(interval);
    let cursor: ChangeCursor = state.cursor;
    const touched = new Map<string, [string, number]>();
    for (const [section, key] of state.pending) touched.set(`${section}\u0000${key}`, [section, key]);
    let block = 0;
    for (;;) {
      const page = await feed.changes(run.origin, cursor, CHANGE_PAGE);
      run.changesRead += page.rows.length;
      let stamp = Number.NaN;
      block++;
      for (const row of page.rows) {
        if (row.updatedAt !== stamp) block++;
        stamp = row.updatedAt;
        if (run.recent.has(row.section, row.key, row.updatedAt)) continue;
        run.recent.add(row.section, row.key, row.updatedAt, -block);
        const shard = run.working.containing(row.section, row.key);
        const key = shard ? shard.entry.firstKey : 0;
        touched.set(`${row.section}\u0000${key}`, [row.section, key]);
      }
      cursor = page.cursor;
      if (page.done || run.changesRead >= config.regen.maxRows) break;
    }
    // The cursor stays a settle window behind: a write stamped before `horizon` may still commit,
    // so changes newer than that are read again next run, and skipped if handled (`recent`).
    const settle: ChangeCursor = { stamp: horizon, key: Number.MAX_SAFE_INTEGER, moveSeq: cursor.moveSeq };
    state.cursor = !isAfter(cursor.stamp, cursor.key, settle)
      ? cursor
      : isAfter(settle.stamp, settle.key, state.cursor)
        ? settle
        : { ...state.cursor, moveSeq: cursor.moveSeq };
    state.pending = [...touched.values()];
  }

  run.track = state.cursor;

  // Shards to redo: changed ones first, then listed ones with no snapshot yet (no pass running).
  const units = new Map<string, [string, number]>();
  for (const [section, key] of state.pending) units.set(`${section}\u0000${key}`, [section, key]);
  if (!state.pass) {
    for (const s of run.working.all()) if (s.urlCount > 0 && !s.snapshot) units.set(`${s.section}\u0000${s.firstKey}`, [s.section, s.firstKey]);
  }
  const left: [string, number][] = [];
  const done = new Set<string>();
  const ordered = [...units.values()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  for (const [section, key] of ordered) {
    if (run.exhausted()) {
      left.push([section, key]);
      continue;
    }
    const shard = run.working.containing(section, key);
    const lo = shard ? shard.entry.firstKey : 0;
    const hi = shard ? shard.end : run.working.entries(section)[0] ? run.working.entries(section)[0]!.firstKey - 1 : undefined;
    const id = `${section}\u0000${lo}`;
    if (done.has(id)) continue;
    done.add(id);
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
  // Rows handled past the cursor (read from the feed or scanned): the next run's re-read skips them.
  const recent = run.recent.after(state.cursor!);
  state.recent = recent.length <= RECENT_MAX ? recent : [];
}

/** Walk mode: the manifest was re-planned from the key rows; render shards lacking a snapshot. */
async function walk(run: Run): Promise<void> {
  const { deps, origin } = run;
  for (const entry of run.working.all()) {
    if (entry.urlCount === 0 || entry.snapshot) continue;
    if (run.exhausted()) break;
    run.shardsChecked++;
    // Fingerprint what is rendered with the planner itself: the bytes are stored only if they
    // are exactly the version the walk planned (records may change between the two reads).
    const check = new SectionPlanner(entry.section, [entry], { maxUrls: Infinity, maxBytes: Infinity, overheadBytes: 0 }, run.build.renderFingerprint, run.now);
    const range = { origin, section: entry.section, firstKey: entry.firstKey, lastKey: entry.lastKey };
    async function* tapped(): AsyncGenerator<UrlRecord> {
      for await (const record of deps.store.reader.records(range)) {
        run.rowsRead++;
        check.add({ section: entry.section, key: record.key, updatedAt: record.updatedAt, deleted: false, size: 0 });
        yield record;
      }
    }
    const doc = await compressDocument(renderShard(deps, origin, entry, tapped()));
    const [rendered] = check.finish(entry.lastKey);
    if (rendered?.version !== entry.version) continue; // changed meanwhile: the next run's walk sees it
    await run.store(entry, doc);
  }
}
