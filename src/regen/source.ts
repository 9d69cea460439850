/**
 * What the regeneration needs from a record source beyond UrlSource: two optional capabilities, in
 * the manner of src/formats/sources.ts. D1UrlSource has both. A source without them (e.g. KV)
 * still regenerates correctly, at a higher cost: every run walks the site's key rows to re-plan the
 * manifest (one index pass per run instead of reading only the changes), then renders through
 * `records` the shards whose version has no snapshot yet (src/regen/regenerate.ts, walk mode).
 */
import type { StoredRecord } from "../core/types.ts";
import type { PlanRow } from "../manifest/manifest.ts";
import type { KeyRow, UrlSource } from "../sources/source.ts";

/** Position in a site's change order: (change stamp, key), plus the sequence of section moves. */
export interface ChangeCursor {
  /** Changes with (updatedAt, key) greater than (stamp, key) are after the cursor. */
  stamp: number;
  key: number;
  /** Section moves with a larger sequence number are after the cursor. */
  moveSeq: number;
}

export interface ChangePage {
  /**
   * Rows changed after the cursor, tombstones included; a record that left a section appears a
   * second time as a tombstone (`deleted: true`) of its old section, with the same key.
   */
  rows: KeyRow[];
  /** Cursor after the rows returned. */
  cursor: ChangeCursor;
  /** No more changes after `cursor` right now. */
  done: boolean;
}

export interface ChangeFeed {
  /**
   * Up to `limit` changes of a site after `after` (and up to `limit` section moves), in change
   * order. `after = null` answers no rows and the cursor of the current head.
   */
  changes(origin: string, after: ChangeCursor | null, limit: number): Promise<ChangePage>;
}

/** A record as the one-pass regeneration reads it: content for rendering plus what planning needs. */
export type ScannedRecord = StoredRecord & PlanRow & { deleted: boolean; size: number };

/** A point in (section, key) order. */
export interface ScanPosition {
  section: string;
  key: number;
}

export interface RangeScanner {
  /**
   * Every record of a site (tombstones too, with their stored size) from `from` (inclusive) up to
   * `until` (inclusive; null = the end of the site), ordered by (section, key). One read per row:
   * the regeneration plans and renders from the same pass.
   */
  scan(origin: string, from: ScanPosition, until: ScanPosition | null): AsyncIterable<ScannedRecord>;
}

export function hasChangeFeed(source: UrlSource): source is UrlSource & ChangeFeed {
  return typeof (source as Partial<ChangeFeed>).changes === "function";
}

export function hasRangeScan(source: UrlSource): source is UrlSource & RangeScanner {
  return typeof (source as Partial<RangeScanner>).scan === "function";
}

/** (section, key) order. */
export function comparePosition(a: ScanPosition, b: ScanPosition): number {
  return a.section < b.section ? -1 : a.section > b.section ? 1 : a.key - b.key;
}
