/**
 * A partitioned site's layout: how many partitions hold its records (`settled`), and, while a
 * database added to its list is being filled, how many will (`target`). Kept in the site's first
 * database (src/adapters/d1/partition-layout.ts), read by every routed write and every partition read.
 *
 * Jump consistent hashing (home.ts) moves, from n to m partitions, only buckets whose new home is a
 * new partition (≥ n): old partitions only lose records, new ones only gain them.
 */
import type { PlanProgress } from "../manifest/build.ts";
import type { ChangeFeed } from "../store/port.ts";
import { partitionOf } from "./home.ts";

/**
 * Where a move stands: the next row of partition `partition` after (section, key). Below `settled`
 * it is the copy's (rows read from that old partition); from `settled` to `target` the manifest
 * build's (rows of that new partition planned, rebalance.ts).
 */
export interface MoveCursor {
  partition: number;
  section: string;
  key: number;
}

/** The manifest of a move's new partition, planned so far (rebalance.ts): kept beside the layout, read only by the move. */
export interface ManifestBuild {
  partition: number;
  plan: PlanProgress;
}

/**
 * A save of a layout read before another save: the step that read it stops (its work so far is a
 * repeatable copy; the step that saved goes on).
 */
export class LayoutChangedError extends Error {
  override readonly name = "LayoutChangedError";
}

export interface PartitionLayout {
  /** Moves on with every save; a save naming another version is refused (LayoutChangedError). */
  version: number;
  settled: number;
  target: number;
  /** When the last move took effect (ms); null: records never moved, no partition hides any row. */
  flippedAt: number | null;
  /** How many partitions held the records before that move (null: none yet, or a layout from before this was kept). */
  flippedFrom: number | null;
  /**
   * When the records left one partition (the flip from one; migration 0029): the links of an index
   * of one partition carry no count, and are read as it listed them for PIN_GRACE_MS from here,
   * whatever moves follow. null: not yet, or never (a site partitioned from its start).
   */
  partitionedAt: number | null;
  /** The copy's position while target > settled. */
  cursor: MoveCursor | null;
  /** Where the removal of the rows the last move left behind stands (purge.ts); null when none is under way. */
  purgeCursor: MoveCursor | null;
  /** When that removal last finished; from then until the next flip no partition hides a row. */
  purgedAt: number | null;
  /**
   * Where the move's catch-up stands in each old partition's commit-ordered feed (a change number,
   * catch-up.ts): from the move's start until the flip, then once more after it; null when none is due.
   */
  catchUp: number[] | null;
}

export interface LayoutStore {
  /** The site's layout; null before its first use. */
  load(origin: string): Promise<PartitionLayout | null>;
  /** Records `settled` partitions unless a layout exists (the existing one wins); returns the layout. */
  create(origin: string, settled: number): Promise<PartitionLayout>;
  save(origin: string, layout: PartitionLayout, now: number): Promise<void>;
  /** The manifest build of the site's move, if one is under way (not read with the layout: it is large). */
  loadBuild(origin: string): Promise<ManifestBuild | null>;
  /** Saves the move's cursor and its manifest build (null: none) in one write. */
  saveBuild(origin: string, layout: PartitionLayout, build: ManifestBuild | null, now: number): Promise<void>;
}

/** One partitioned site's layout (what its services hold). */
export interface SiteLayout {
  read(): Promise<PartitionLayout>;
  save(layout: PartitionLayout, now: number): Promise<void>;
  loadBuild(): Promise<ManifestBuild | null>;
  saveBuild(layout: PartitionLayout, build: ManifestBuild | null, now: number): Promise<void>;
}

/**
 * The site's layout, recorded at its first use: as many partitions as hold records then (all of
 * the list when none does yet), so that a database appended before the site's first request is
 * still filled by a move and never taken for one that holds its share.
 */
export async function siteLayout(store: LayoutStore, origin: string, feeds: readonly Pick<ChangeFeed, "newest">[]): Promise<PartitionLayout> {
  const found = await store.load(origin);
  if (found) return found;
  const newest = await Promise.all(feeds.map((f) => f.newest(origin, Number.MAX_SAFE_INTEGER)));
  const last = newest.findLastIndex((n) => n !== null);
  return store.create(origin, last < 0 ? feeds.length : last + 1);
}

/** Whether old partitions still hold rows a move gave away (and so leave them out of what they serve). */
export const hidesRows = (layout: PartitionLayout): boolean =>
  layout.flippedAt !== null && (layout.purgedAt === null || layout.purgedAt < layout.flippedAt);

/** Whether a loc is being moved now: its old home serves it until the flip, its new home from then on. */
const isMoving = (loc: string, layout: PartitionLayout): boolean => layout.target > layout.settled && partitionOf(loc, layout.target) >= layout.settled;

/** The partition a loc being moved now goes to (null: it stays where it is, or no move is under way). */
export const movingTo = (loc: string, layout: PartitionLayout): number | null => (isMoving(loc, layout) ? partitionOf(loc, layout.target) : null);

/** The partition that holds a loc now (writes, lookups). */
export const homeOf = (loc: string, layout: PartitionLayout): number => partitionOf(loc, layout.settled);

/**
 * Whether partition `p`'s copy of a loc is the one served. After a move, an old partition still
 * holds the rows it gave away until they are cleaned; a new partition being filled holds rows
 * whose home is still the old one until the flip, but it is not served before.
 */
export function isServedBy(loc: string, p: number, layout: PartitionLayout): boolean {
  if (!hidesRows(layout)) return true;
  return partitionOf(loc, p < layout.settled ? layout.settled : layout.target) === p;
}
