/**
 * One run's work: plans and renders shards in ONE pass over their rows (the same rows feed the
 * planner — boundaries, splits, version — and the renderer), stores each rendered shard gzipped
 * under a content-addressed key, and counts what it did. Stops at shard boundaries once the work
 * bound (REGEN_MAX_SHARDS, REGEN_MAX_ROWS) is reached.
 *
 * A shard whose render or store fails does not stop the run: it is planned from its rows all the
 * same, stays listed without a snapshot (served by live render) and is recorded in `failures`
 * (src/regen/failures.ts retries it later, backing off).
 */
import { EmptySitemapError } from "../core/errors.ts";
import type { UrlRecord } from "../core/types.ts";
import { type BuildOptions, planLimits } from "../manifest/build.ts";
import { type PlanLimits, SectionPlanner, type ShardEntry, type ShardManifest } from "../manifest/manifest.ts";
import { manifestBuildOptions, renderShard } from "../sitemaps.ts";
import { type StagedDocument, partsOf, shardSnapshotKey, snapshotKey, stageDocument } from "../snapshots/store.ts";
import type { ChangeCursor, RangeScan, ScanPosition, ScannedRecord } from "../store/port.ts";
import type { RegenDeps } from "./deps.ts";
import { type RunFailure, describeError } from "./failures.ts";
import { RecentChanges } from "./recent.ts";
import type { Working } from "./working.ts";

/** Whether change (stamp, key) comes after a cursor position. */
export const isAfter = (stamp: number, key: number, c: ChangeCursor): boolean => stamp > c.stamp || (stamp === c.stamp && key > c.key);

interface SectionRun {
  name: string;
  lo: number;
  /** Last key of the range (undefined: to the end of the section). */
  hi: number | undefined;
  planner: SectionPlanner;
  flushed: number;
  renders: Map<number, { doc: StagedDocument | null; kinds: number; error: unknown }>;
}

export class Run {
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
  readonly failures: RunFailure[] = [];
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

  /** Renders a document into the snapshot store's staging (parts registered for the GC first). */
  stage(xml: ReadableStream<Uint8Array>): Promise<StagedDocument> {
    return stageDocument(this.deps.snapshots, xml, (prefix) => this.deps.state.tentative(this.origin, prefix, this.now));
  }

  /** Commits a staged document under its content-addressed key; returns that key. */
  async commit(documentKey: string, version: string, doc: StagedDocument): Promise<string> {
    const key = snapshotKey(documentKey, doc.staged);
    await this.deps.state.tentative(this.origin, key, this.now);
    await this.deps.snapshots.commit(key, doc.staged, {
      version,
      xmlBytes: doc.xmlBytes,
      gzBytes: doc.staged.gzBytes,
      storedAt: this.now,
    });
    this.storedKeys.push(key);
    const parts = partsOf(key);
    if (parts) this.storedKeys.push(parts);
    this.bytesStored += doc.staged.gzBytes;
    this.xmlBytes += doc.xmlBytes;
    return key;
  }

  /** Stores a shard's snapshot; a failure leaves it without one (live render) and is recorded. */
  async store(entry: ShardEntry, doc: StagedDocument): Promise<void> {
    try {
      entry.snapshot = await this.commit(shardSnapshotKey(this.origin, entry.section, entry.n, entry.version), entry.version, doc);
      this.shardsRendered++;
    } catch (err) {
      this.fail(entry, err);
    }
  }

  fail(entry: ShardEntry, err: unknown): void {
    entry.snapshot = null;
    this.failures.push({ document: `${entry.section}-${entry.n}`, section: entry.section, key: entry.firstKey, error: describeError(err) });
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
      if (render && render.error !== null) {
        this.fail(entry, render.error);
        continue;
      }
      let doc = render?.doc ?? null;
      if (!doc || render!.kinds !== (entry.extKinds ?? 0)) {
        // The head declared other namespaces than the shard turned out to use: render again
        // from the record store with the final entry (rare: a shard gaining or losing an extension).
        this.rerenders++;
        this.rowsRead += entry.urlCount;
        try {
          doc = await this.stage(renderShard(this.deps, this.origin, entry));
        } catch (err) {
          this.fail(entry, err);
          continue;
        }
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
        /** The shard's next row (planned), or undefined at its end. */
        const take = async (): Promise<ScannedRecord | undefined> => {
          if (complete) return undefined;
          const row = await pull();
          if (row && row.section === section.name && !section.planner.startsNewShard(row)) {
            section.planner.add(row);
            return row;
          }
          cursor.next = row;
          complete = true;
          return undefined;
        };
        async function* rows(): AsyncGenerator<UrlRecord> {
          if (!first.deleted) {
            live++;
            yield first;
          }
          for (let row = await take(); row; row = await take()) {
            if (!row.deleted) {
              live++;
              yield row;
            }
          }
        }
        const shape: ShardEntry = {
          section: section.name,
          n,
          firstKey: first.key,
          lastKey: first.key,
          urlCount: 0,
          byteCount: 0,
          lastChange: 0,
          version: "",
          extKinds: kinds,
        };
        this.shardsChecked++;
        let doc: StagedDocument | null = null;
        let error: unknown = null;
        try {
          doc = await this.stage(renderShard(this.deps, this.origin, shape, rows()));
        } catch (err) {
          // Only tombstones in this shard (EmptySitemapError): nothing to render; it is kept empty
          // and unlisted. Any other failure is this shard's: its remaining rows are still planned
          // (a failing scan fails the run here) and the shard is listed without a snapshot.
          if (!(complete && live === 0 && err instanceof EmptySitemapError)) error = err;
          while (await take());
        }
        section.renders.set(n, { doc, kinds, error });
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
