/**
 * Removing a deleted registered site's rows from its D1 database (the `site-purge` job,
 * src/jobs/site-purge.ts; adapter: src/adapters/d1/site-purge.ts). Every call is a few bounded
 * statements, each removing at most `limit` rows, and idempotent: a killed step's retry finds less
 * to do, never something wrong.
 */

export interface SitePurgeStore {
  /** Deletes up to `limit` of the site's records (`urls` rows, tombstones included): how many. */
  purgeRecords(origin: string, limit: number): Promise<number>;
  /**
   * The snapshot keys the regeneration registered for the site's garbage collection (written, or
   * about to be, and not yet collected): at most `limit`. The caller deletes them, then `dropKeys`.
   */
  collectableKeys(origin: string, limit: number): Promise<string[]>;
  /** Forgets those keys (their snapshots are deleted). */
  dropKeys(origin: string, keys: readonly string[]): Promise<void>;
  /**
   * Deletes the site's other rows, in every table keyed by its origin (manifest and shards,
   * regeneration, notification, Search Console, admin sessions and audit, jobs, crawler log,
   * housekeeping, partition layout, syncs scoped to it alone) and the state of `mirrors` (its
   * MIRROR_SITEMAPS, and any mirror that remembered it as its site): at most `limit` rows per
   * statement. true when nothing of the site is left there.
   */
  purgeState(origin: string, mirrors: readonly string[], limit: number): Promise<boolean>;
}
