/**
 * What the housekeeping (housekeeping.ts) asks of one database: small reads that say where the
 * litter is, and bounded deletes that read only what they delete. D1 keeps it
 * (src/adapters/d1/housekeeping.ts). Every method is one statement.
 */
import type { ChangeStamp } from "../store/port.ts";

/** Where a site's litter starts. */
export interface SiteLitter {
  origin: string;
  /** Sequence number of the site's oldest recorded section move; null: none. */
  oldestMove: number | null;
  /** Change stamp of the site's oldest tombstone; null: none. */
  oldestTombstone: number | null;
  /** What the housekeeping last saved of the site (saveSite); null: nothing. */
  seen: string | null;
}

/** A row of the jobs table: a job kind and its target (a site, or a mirror's URL). */
export interface JobKey {
  kind: string;
  origin: string;
}

/** A walk's saved position and when it was saved (ms). */
export interface SavedCursor {
  cursor: string;
  at: number;
}

export interface HousekeepingStore {
  /** Every walk's saved position in this database, by task. */
  cursors(): Promise<Map<string, SavedCursor>>;
  saveCursor(task: string, cursor: string, now: number): Promise<void>;
  /** For each of `origins` (at most 500), in their order: its oldest section move and oldest tombstone, and what was saved of it; three index reads a site. */
  litter(origins: readonly string[]): Promise<SiteLitter[]>;
  saveSite(origin: string, seen: string, now: number): Promise<void>;
  /** Deletes up to `limit` of the site's section moves numbered `through` or lower, oldest first; how many. */
  trimMoves(origin: string, through: number, limit: number): Promise<number>;
  /** Deletes up to `limit` of the site's tombstones at or before `through` in (change stamp, key) order and, when it has one, numbered at most its `seq`, oldest first; how many. */
  purgeTombstones(origin: string, through: ChangeStamp, limit: number): Promise<number>;
  /** Up to `limit` rows of the jobs table after `after` in (kind, origin) order. */
  jobs(after: JobKey | null, limit: number): Promise<JobKey[]>;
  /** Deletes these job rows (at most 49), except one whose message is due after `now`; how many. */
  dropJobs(rows: readonly JobKey[], now: number): Promise<number>;
}
