/**
 * Removing a deleted registered site's rows from every D1 database it may have used (the `site-purge` job,
 * src/jobs/site-purge.ts; adapter: src/adapters/d1/site-purge.ts). Every call is a few bounded
 * statements, each removing at most `limit` rows, and idempotent: a killed step's retry finds less
 * to do, never something wrong.
 */

export interface SitePurgeStore {
  /** Whether any record of the site (a tombstone included) is kept there: a DATABASE change is refused while one is. */
  holdsRecords(origin: string): Promise<boolean>;
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

/**
 * The purge over every database a site may have used (its own first): a site's rows are removed
 * wherever they are, not only where its settings point now. Each call goes to each database in turn.
 */
export function purgeEverywhere(stores: readonly SitePurgeStore[]): SitePurgeStore {
  return {
    async holdsRecords(origin) {
      for (const s of stores) if (await s.holdsRecords(origin)) return true;
      return false;
    },
    async purgeRecords(origin, limit) {
      let n = 0;
      for (const s of stores) n += await s.purgeRecords(origin, limit);
      return n;
    },
    async collectableKeys(origin, limit) {
      const keys: string[] = [];
      for (const s of stores) if (keys.length < limit) keys.push(...(await s.collectableKeys(origin, limit - keys.length)));
      return keys;
    },
    async dropKeys(origin, keys) {
      for (const s of stores) await s.dropKeys(origin, keys);
    },
    async purgeState(origin, mirrors, limit) {
      let done = true;
      for (const s of stores) if (!(await s.purgeState(origin, mirrors, limit))) done = false;
      return done;
    },
  };
}
