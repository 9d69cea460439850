/**
 * One run's work: plans and renders shards in ONE pass over their rows (the same rows feed the
 * planner — boundaries, splits, version — and the renderer), stores each rendered shard's snapshot
 * (snapshot-writer.ts), and counts what it did (counters.ts). Stops at shard boundaries once the
 * work bound (REGEN_MAX_SHARDS, REGEN_MAX_ROWS) is reached.
 *
 * A shard whose render or snapshot fails does not stop the run: it is planned from its rows all
 * the same, stays listed without a snapshot (served by live render) and is recorded in `failures`
 * (src/regen/failures.ts retries it later, backing off).
 */
import { BlockCutter, type BlockStat } from "../core/block-plan.ts";
import { EmptySitemapError } from "../core/errors.ts";
import { type BuildOptions, planLimits } from "../manifest/build.ts";
import { type PlanLimits, SectionPlanner, type ShardEntry, type ShardManifest, plannedBlockStarts } from "../manifest/manifest.ts";
import { manifestBuildOptions, renderShard } from "../sitemaps.ts";
import type { StagedDocument } from "../snapshots/stage-document.ts";
import type { ChangeCursor, RangeScan, ScanPosition, ScannedRecord } from "../store/port.ts";
import { type RunCounters, newCounters } from "./counters.ts";
import type { RegenDeps } from "./deps.ts";
import { type RunFailure, describeError } from "./failures.ts";
import type { ManifestDraft } from "./manifest-draft.ts";
import { RecentChanges } from "./recent.ts";
import { ShardRowsReader } from "./shard-rows.ts";
import { SnapshotWriter } from "./snapshot-writer.ts";

/** Whether change (stamp, key) comes after a cursor position. */
export const isAfter = (stamp: number, key: number, c: ChangeCursor): boolean => stamp > c.stamp || (stamp === c.stamp && key > c.key);

/** A section's key range being re-planned, and the renders of its shards not yet flushed. */
interface SectionRun {
  name: string;
  lo: number;
  /** Last key of the range (undefined: to the end of the section). */
  hi: number | undefined;
  planner: SectionPlanner;
  flushed: number;
  renders: Map<number, { doc: StagedDocument | null; kinds: number; error: unknown }>;
}

/**
 * A run stops taking on work once its invocation has used this many service calls (D1, KV and the
 * rest, of the one budget of 1,000 they share, src/jobs/meter.ts): the shard in flight (a 50,000-URL shard is ~21
 * queries and a few puts) and the publish after it (index snapshot, manifest, state, at most 100
 * snapshot deletions) need far less than the rest.
 */
const INVOCATION_SHARE = 600;

/** What bounds a run besides REGEN_MAX_SHARDS and REGEN_MAX_ROWS (a job step's). */
export interface RunBounds {
  /** Wall-clock time (ms) after which no shard is started. */
  deadline?: number;
  /** What the invocation has used so far (counted at the bindings). */
  usage?: () => { serviceCalls: number } | undefined;
}

export class Run {
  readonly deps: RegenDeps;
  readonly origin: string;
  readonly now: number;
  readonly build: BuildOptions;
  readonly limits: PlanLimits;
  /** The manifest being rebuilt, published at the end (publish.ts). */
  readonly draft: ManifestDraft;
  /** The manifest published before this run (null: none yet). */
  readonly published: ShardManifest | null;
  readonly counters: RunCounters = newCounters();
  readonly snapshots: SnapshotWriter;
  readonly failures: RunFailure[] = [];
  /** Rows scanned past this cursor are remembered as handled (see RegenState.recent). */
  track: ChangeCursor | null = null;
  readonly recent = new RecentChanges();
  /** Blocks of rows scanned (see RecentChanges.add): numbered across the run's passes. */
  #block = 0;

  /** When the run stops taking on work: the job step's time budget, and what its invocation has used. */
  readonly #bounds: RunBounds;

  constructor(deps: RegenDeps, origin: string, now: number, published: ShardManifest | null, draft: ManifestDraft, bounds: RunBounds = {}) {
    this.#bounds = bounds;
    this.deps = deps;
    this.origin = origin;
    this.now = now;
    this.published = published;
    this.draft = draft;
    this.build = manifestBuildOptions(deps.config, origin);
    this.limits = planLimits(this.build);
    this.snapshots = new SnapshotWriter(deps.snapshots, deps.state, origin, now, this.counters);
  }

  exhausted(): boolean {
    const { maxShards, maxRows } = this.deps.config.regen;
    const { shardsChecked, rowsRead } = this.counters;
    if (shardsChecked === 0) return false;
    if (shardsChecked >= maxShards || rowsRead >= maxRows) return true;
    const { deadline, usage } = this.#bounds;
    if (deadline !== undefined && Date.now() >= deadline) return true;
    const used = usage?.();
    return used !== undefined && used.serviceCalls >= INVOCATION_SHARE;
  }

  /** Commits a shard's snapshot; a failure leaves it without one (live render) and is recorded. */
  async commitShard(entry: ShardEntry, doc: StagedDocument, blocks?: readonly BlockStat[]): Promise<void> {
    try {
      const { section, n, version } = entry;
      entry.snapshot = await this.snapshots.commit({ kind: "shard", origin: this.origin, section, n, version }, doc, blocks);
      this.counters.shardsRendered++;
    } catch (err) {
      this.fail(entry, err);
    }
  }

  fail(entry: ShardEntry, err: unknown): void {
    entry.snapshot = null;
    this.failures.push({ document: `${entry.section}-${entry.n}`, section: entry.section, key: entry.firstKey, error: describeError(err) });
  }

  #openSection(name: string, lo: number, hi: number | undefined): SectionRun {
    const previous = this.draft.entries(name).filter((s) => s.firstKey >= lo && (hi === undefined || s.firstKey <= hi));
    const planner = new SectionPlanner(
      name,
      previous,
      this.limits,
      this.build.renderFingerprint,
      this.now,
      Math.max(this.draft.maxN(name) + 1, this.build.firstShardNumber ?? 1),
    );
    return { name, lo, hi, planner, flushed: 0, renders: new Map() };
  }

  /** Commits the snapshots of the shards the planner closed since the last flush. */
  async #flush(run: SectionRun): Promise<void> {
    const closed = run.planner.closed;
    for (; run.flushed < closed.length; run.flushed++) {
      const entry = closed[run.flushed]!;
      const render = run.renders.get(entry.n);
      run.renders.delete(entry.n);
      if (entry.urlCount === 0) continue;
      if (entry.snapshot) {
        if (await this.snapshots.intact(entry.snapshot)) {
          this.counters.shardsUnchanged++;
          continue;
        }
        // A snapshot in parts that lost one: stored again from this pass's render.
        entry.snapshot = null;
      }
      if (render && render.error !== null) {
        this.fail(entry, render.error);
        continue;
      }
      let doc = render?.doc ?? null;
      if (!doc || render!.kinds !== (entry.extKinds ?? 0)) {
        // The head declared other namespaces than the shard turned out to use: render again
        // from the record store with the final entry (rare: a shard gaining or losing an extension).
        this.counters.rerenders++;
        this.counters.rowsRead += entry.urlCount;
        try {
          doc = await this.snapshots.stage(renderShard(this.deps, this.origin, entry));
        } catch (err) {
          this.fail(entry, err);
          continue;
        }
      }
      await this.commitShard(entry, doc, run.planner.blocks.get(entry.n));
    }
  }

  async #closeSection(run: SectionRun): Promise<void> {
    run.planner.finish(run.hi);
    await this.#flush(run);
    this.draft.replace(run.name, run.lo, run.hi ?? Number.POSITIVE_INFINITY, run.planner.closed);
  }

  /** Notes scanned rows past `track` as handled; a block is a run of rows of one section and stamp read one after the other. */
  #noteHandled(): (row: ScannedRecord) => void {
    let previous = "";
    return (row) => {
      if (!this.track || !isAfter(row.updatedAt, row.key, this.track)) return;
      const id = `${row.section}\u0000${row.updatedAt}`;
      if (id !== previous) this.#block++;
      previous = id;
      this.recent.add(row.section, row.key, row.updatedAt, this.#block);
    };
  }

  /**
   * One pass over a key range, planning and rendering from the same rows. `single`: the range is
   * one shard's (ends at `hi`, or open-ended); otherwise a site pass from `from` to the end.
   * Returns where the rest of the range resumes when the work bound stopped it, else null.
   */
  async pass(scanner: RangeScan, from: ScanPosition, single: { hi: number | undefined } | null): Promise<ScanPosition | null> {
    const until = single ? { section: from.section, key: single.hi ?? Number.MAX_SAFE_INTEGER } : null;
    const reader = new ShardRowsReader(scanner.scan(this.origin, from, until), this.counters, this.#noteHandled());
    const loFor = (section: string): number => (section === from.section ? from.key : 0);
    /** A site pass closes sections that have shards but no rows left (all moved away). */
    const closeEmpty = async (after: string | null, before: string | null): Promise<void> => {
      if (single) return;
      for (const name of this.draft.sections()) {
        if (after === null ? name < from.section : name <= after) continue;
        if (before !== null && name >= before) continue;
        const lo = loFor(name);
        if (!this.draft.entries(name).some((s) => s.firstKey >= lo)) continue;
        await this.#closeSection(this.#openSection(name, lo, undefined));
      }
    };

    let current: SectionRun | undefined;
    try {
      for (let first = await reader.read(); first; first = reader.takeHeld()) {
        if (!current || first.section !== current.name) {
          if (current) await this.#closeSection(current);
          await closeEmpty(current?.name ?? null, first.section);
          if (current && this.exhausted()) return { section: first.section, key: 0 };
          current = this.#openSection(first.section, loFor(first.section), single?.hi);
        } else if (this.exhausted()) {
          // `first` starts a new shard of this section: stop here, the rest is for the next run.
          const stop = current.planner.stopBefore(first, current.hi);
          await this.#flush(current);
          this.draft.replace(current.name, current.lo, stop.resumeKey - 1, current.planner.closed);
          return { section: current.name, key: stop.resumeKey };
        }
        await this.#renderShard(current, first, reader);
      }
      if (current) await this.#closeSection(current);
      else if (single) await this.#closeSection(this.#openSection(from.section, from.key, single.hi));
      await closeEmpty(current?.name ?? null, null);
      return null;
    } finally {
      await reader.close();
    }
  }

  /** Plans and renders the shard `first` opens, from the rows as they are read. */
  async #renderShard(section: SectionRun, first: ScannedRecord, reader: ShardRowsReader): Promise<void> {
    section.planner.add(first);
    await this.#flush(section);
    const n = section.planner.openShardNumber!;
    const previous = this.draft.entries(section.name).find((s) => s.n === n);
    const kinds = previous?.extKinds ?? this.draft.kinds(section.name);
    const rows = reader.shard(first, section.planner);
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
    this.counters.shardsChecked++;
    let doc: StagedDocument | null = null;
    let error: unknown = null;
    try {
      // Cut in the blocks the planner cuts as it goes: from the starts this shard had (none: a new one).
      const blocks = BlockCutter.plan(plannedBlockStarts(previous));
      doc = await this.snapshots.stage(renderShard(this.deps, this.origin, shape, rows.records(), blocks));
    } catch (err) {
      // Only tombstones in this shard (EmptySitemapError): nothing to render; it is kept empty
      // and unlisted. Any other failure is this shard's: its remaining rows are still planned
      // (a failing scan fails the run here) and the shard is listed without a snapshot.
      if (!(rows.complete && rows.live === 0 && err instanceof EmptySitemapError)) error = err;
      await rows.drain();
    }
    section.renders.set(n, { doc, kinds, error });
  }
}
