/**
 * Removing a deleted registered site's rows from every D1 database the deployment binds (the `site-purge` job,
 * src/jobs/site-purge.ts; adapter: src/adapters/d1/site-purge.ts), and a site's state from the database a
 * DATABASE change leaves (src/admin/database-change.ts). Every call is a few bounded statements, each
 * removing at most `limit` rows, and idempotent: a killed step's retry finds less to do, never something wrong.
 */

/**
 * What of a site a database holds that a DATABASE change would strand or lose: its records
 * (tombstones and a sync's staged batches included), a sync under way, snapshots its regeneration
 * registered for collection (KV keys only those rows name). An open sync is one open or committing. null: nothing but state the change clears.
 */
export type Stranded = "records" | "open-sync" | "snapshots";

export interface SitePurgeStore {
  /** What of the site is kept there that a DATABASE change must not leave behind (one read), or null. */
  stranded(origin: string): Promise<Stranded | null>;
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
   * housekeeping, partition layout, syncs scoped to it alone) and its mirrors' state and jobs (kept
   * under its origin: migration 0027; and rows from before it that remembered it as their site): at
   * most `limit` rows per statement. true when nothing of the site is left there.
   */
  purgeState(origin: string, limit: number): Promise<boolean>;
}

/**
 * The purge over every database a site may have used (its own first): a site's rows are removed
 * wherever they are, not only where its settings point now. Each call goes to each database in turn
 * (the records' to those not yet found emptied by this object).
 */
export function purgeEverywhere(stores: readonly SitePurgeStore[]): SitePurgeStore {
  const emptied = new Set<SitePurgeStore>();
  return {
    async stranded(origin) {
      for (const s of stores) {
        const what = await s.stranded(origin);
        if (what !== null) return what;
      }
      return null;
    },
    async purgeRecords(origin, limit) {
      // A database that had fewer than `limit` left is done: the step's later rounds ask only the others.
      let n = 0;
      for (const s of stores) {
        if (emptied.has(s)) continue;
        const deleted = await s.purgeRecords(origin, limit);
        if (deleted < limit) emptied.add(s);
        n += deleted;
      }
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
    async purgeState(origin, limit) {
      let done = true;
      for (const s of stores) if (!(await s.purgeState(origin, limit))) done = false;
      return done;
    },
  };
}
