/** Builds (or updates) a site's manifest with one keyset walk over its records. */
import { EXT_ALL } from "../core/extensions/kinds.ts";
import { urlsetOverheadBytes } from "../core/writers.ts";
import type { RecordReader } from "../store/port.ts";
import { type PlanLimits, SectionPlanner, type ShardEntry, type ShardManifest, manifestVersion } from "./manifest.ts";

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
  for await (const row of reader.keyRows(origin)) {
    if (row.section !== section) {
      if (current) shards.push(...current.finish());
      section = row.section;
      walked.add(section);
      current = planner(section);
    }
    current!.add(row);
  }
  if (current) shards.push(...current.finish());
  // Sections that lost every row keep their (now empty) shards, so their numbers stay taken.
  for (const [name] of previousBySection) if (!walked.has(name)) shards.push(...planner(name).finish());
  shards.sort((a, b) => (a.section < b.section ? -1 : a.section > b.section ? 1 : a.firstKey - b.firstKey));

  const version = manifestVersion(shards, options.indexFingerprint);
  // The index snapshot (src/snapshots) is per version: one stored for this version stays valid.
  const snapshot = previous?.version === version ? (previous.snapshot ?? null) : null;
  return { origin, version, builtAt: now, snapshot, shards };
}
