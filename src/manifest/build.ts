/**
 * Builds (or updates) a site's manifest with one keyset walk over its records: whole
 * (`buildManifest`), within a number of rows (`buildManifestWithin`: a request, which never walks a
 * large site), or across steps that each read a bounded number of rows (`planStep`: a move's new
 * partition, planned before its flip).
 */
import { EXT_ALL } from "../core/extensions/kinds.ts";
import { urlsetOverheadBytes } from "../core/writers.ts";
import type { RangeScan, RecordReader } from "../store/port.ts";
import { type PlanLimits, SectionPlanner, type ShardEntry, type ShardManifest, type SuspendedSection, manifestVersion } from "./manifest.ts";

export interface BuildOptions {
  maxUrls: number;
  maxBytes: number;
  /** Fingerprint of the render options (shard content depends on them). */
  renderFingerprint: string;
  /** Fingerprint of what else shapes the index (link form, …). */
  indexFingerprint: string;
  now?: number;
  /** The smallest number a new shard takes (a partition's own range, src/partitions/keys.ts); default 1. */
  firstShardNumber?: number;
}

/** Shard limits of a plan (the walk's and the cron's alike). */
export function planLimits(options: BuildOptions): PlanLimits {
  // The longest head (every extension namespace, the stylesheet PI): byte counts stay upper bounds.
  return { maxUrls: options.maxUrls, maxBytes: options.maxBytes, overheadBytes: urlsetOverheadBytes(EXT_ALL, true) };
}

export async function buildManifest(
  reader: Pick<RecordReader, "keyRows">,
  origin: string,
  previous: ShardManifest | null,
  options: BuildOptions,
): Promise<ShardManifest> {
  return (await buildManifestWithin(reader, origin, previous, options, Number.POSITIVE_INFINITY)).manifest!;
}

/**
 * The manifest when the walk ends within `maxRows` key rows (tombstones included), else null: the
 * walk stops once it has read `maxRows` rows without reaching the end, asking for no row after them
 * (so a site of exactly `maxRows` rows counts as too large). `rows`: the key rows read.
 */
export async function buildManifestWithin(
  reader: Pick<RecordReader, "keyRows">,
  origin: string,
  previous: ShardManifest | null,
  options: BuildOptions,
  maxRows: number,
): Promise<{ manifest: ShardManifest | null; rows: number }> {
  if (maxRows <= 0) return { manifest: null, rows: 0 };
  const now = options.now ?? Date.now();
  const limits = planLimits(options);
  const previousBySection = new Map<string, ShardEntry[]>();
  for (const shard of previous?.shards ?? []) {
    const list = previousBySection.get(shard.section) ?? [];
    list.push(shard);
    previousBySection.set(shard.section, list);
  }
  const planner = (section: string): SectionPlanner =>
    new SectionPlanner(section, previousBySection.get(section) ?? [], limits, options.renderFingerprint, now, options.firstShardNumber);

  const shards: ShardEntry[] = [];
  const walked = new Set<string>();
  let section: string | undefined;
  let current: SectionPlanner | undefined;
  let rows = 0;
  // Asked for no more rows than may be read: `maxRows` rows that do not end the walk are too many.
  for await (const row of reader.keyRows(origin, Number.isFinite(maxRows) ? maxRows : undefined)) {
    if (row.section !== section) {
      if (current) shards.push(...current.finish());
      section = row.section;
      walked.add(section);
      current = planner(section);
    }
    current!.add(row);
    // Leaving the loop ends the walk: no further page is asked for.
    if (++rows >= maxRows) return { manifest: null, rows };
  }
  if (current) shards.push(...current.finish());
  // Sections that lost every row keep their (now empty) shards, so their numbers stay taken.
  for (const [name] of previousBySection) if (!walked.has(name)) shards.push(...planner(name).finish());
  shards.sort((a, b) => (a.section < b.section ? -1 : a.section > b.section ? 1 : a.firstKey - b.firstKey));

  const version = manifestVersion(shards, options.indexFingerprint);
  // The index snapshot (src/snapshots) is per version: one stored for this version stays valid.
  const snapshot = previous?.version === version ? (previous.snapshot ?? null) : null;
  return { manifest: { origin, version, builtAt: now, snapshot, shards }, rows };
}

/**
 * A fresh plan (no previous manifest) made across steps, kept between them as JSON: the shards
 * planned so far and the section planner stopped between two rows. The rows must not change while
 * it is made (a move's new partition after its copy: only the copy writes there).
 */
export interface PlanProgress {
  /** When the plan began: its manifest's `builtAt`. */
  startedAt: number;
  /** The shards planned so far, in (section, key) order. */
  shards: ShardEntry[];
  /** The section being planned when the last step stopped. */
  open: SuspendedSection | null;
  /** The last row read; the next step reads from the row after it. null before the first step. */
  after: { section: string; key: number } | null;
  /** Rows read by every step so far. */
  rows: number;
}

export const newPlan = (startedAt: number): PlanProgress => ({ startedAt, shards: [], open: null, after: null, rows: 0 });

/**
 * One step of a plan made across steps: reads at most `maxRows` rows after `progress.after` (in
 * (section, key) order, tombstones included) and stops before the first row it may not read, or
 * at `deadline` (ms). Updates `progress` in place (the caller keeps it), and returns the manifest
 * once the rows have run out: the same shards as `buildManifest` with no previous manifest.
 */
export async function planStep(
  scan: RangeScan,
  origin: string,
  progress: PlanProgress,
  options: BuildOptions,
  maxRows: number,
  deadline?: number,
): Promise<{ manifest: ShardManifest | null; rows: number }> {
  const limits = planLimits(options);
  let current = progress.open ? SectionPlanner.resume(progress.open, limits, options.renderFingerprint, progress.startedAt) : undefined;
  let rows = 0;
  let ended = maxRows > 0;
  if (ended) {
    const from = progress.after ? { section: progress.after.section, key: progress.after.key + 1 } : { section: "", key: 0 };
    for await (const row of scan.scan(origin, from, null)) {
      if (current?.section !== row.section) {
        if (current) progress.shards.push(...current.finish());
        current = new SectionPlanner(row.section, [], limits, options.renderFingerprint, progress.startedAt, options.firstShardNumber);
      }
      current.add(row);
      progress.after = { section: row.section, key: row.key };
      rows++;
      // Leaving the loop ends the scan: no further page is asked for.
      if (rows >= maxRows || (deadline !== undefined && Date.now() >= deadline)) {
        ended = false;
        break;
      }
    }
  }
  progress.rows += rows;
  if (!ended) {
    if (current) {
      progress.shards.push(...current.closed);
      progress.open = current.suspend();
    }
    return { manifest: null, rows };
  }
  if (current) progress.shards.push(...current.finish());
  progress.open = null;
  const shards = [...progress.shards].sort((a, b) => (a.section < b.section ? -1 : a.section > b.section ? 1 : a.firstKey - b.firstKey));
  return { manifest: { origin, version: manifestVersion(shards, options.indexFingerprint), builtAt: progress.startedAt, snapshot: null, shards }, rows };
}
