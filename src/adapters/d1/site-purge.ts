/**
 * Removing a deleted registered site's rows from its D1 database (src/registry/purge.ts, the
 * `site-purge` job). Every delete names at most `limit` rows, found through an index on the site's
 * origin where the table has one (the small tables without one — notify_targets, admin_sessions,
 * mirrors, syncs — are scanned: a few rows per site), so each statement reads about what it removes.
 */
import type { SitePurgeStore, Stranded } from "../../registry/purge.ts";

/**
 * Every table keyed by a site's origin (migrations/), with what names one of its rows: the rowid,
 * or the primary key of a WITHOUT ROWID table. `urls` (purgeRecords), `snapshot_gc` (its keys are
 * deleted from KV first: collectableKeys, dropKeys), `jobs` (by kind), the mirrors and the syncs
 * are purged apart. test/workers/site-purge.test.ts checks that no table with an `origin` column is
 * missing.
 */
const BY_ORIGIN: readonly (readonly [table: string, key: string])[] = [
  ["shards", "rowid"],
  ["manifests", "rowid"],
  ["regen_state", "rowid"],
  ["regen_runs", "rowid"],
  ["url_moves", "rowid"],
  ["notify_targets", "rowid"],
  ["notify_leases", "rowid"],
  ["gsc_sitemaps", "origin, path"],
  ["gsc_reads", "rowid"],
  ["admin_sessions", "id_hash"],
  ["admin_audit", "rowid"],
  ["admin_refusals", "rowid"],
  ["admin_cooldowns", "origin, action"],
  ["partition_layouts", "rowid"],
  ["partition_databases", "rowid"],
  ["housekeeping_sites", "origin"],
  ["crawler_fetches", "origin, crawler, document, minute, ok"],
  ["crawler_log_sites", "origin"],
  ["crawler_counts", "origin, crawler, verified, slot"],
];

/** Job kinds whose target is a site (jobs is WITHOUT ROWID, keyed by (kind, origin): one seek per kind). */
const SITE_JOB_KINDS = ["regenerate", "notify", "gsc-status", "sync-sweep", "rebalance", "crawler-ranges"];

/** A site's syncs at most per step (each sync's seen rows in statements of `limit`). */
const SYNCS_PER_STEP = 10;

export class D1SitePurge implements SitePurgeStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** One read: a seek on urls and snapshot_gc by origin, and a scan of the open syncs (a few per database). */
  async stranded(origin: string): Promise<Stranded | null> {
    return this.#db
      .prepare(
        `SELECT CASE
           WHEN EXISTS (SELECT 1 FROM urls WHERE origin = ?1) THEN 'records'
           WHEN EXISTS (SELECT 1 FROM syncs, json_each(syncs.scope, '$.sites') AS s WHERE syncs.state IN ('open', 'committing') AND s.value = ?1) THEN 'open-sync'
           WHEN EXISTS (SELECT 1 FROM snapshot_gc WHERE origin = ?1) THEN 'snapshots'
         END AS what`,
      )
      .bind(origin)
      .first<Stranded | null>("what");
  }

  /** SEARCH urls USING INTEGER PRIMARY KEY, from a covering index on (origin, …): reads what it deletes. */
  async purgeRecords(origin: string, limit: number): Promise<number> {
    const { meta } = await this.#db.prepare("DELETE FROM urls WHERE id IN (SELECT id FROM urls WHERE origin = ?1 LIMIT ?2)").bind(origin, limit).run();
    return meta.changes ?? 0;
  }

  /** SEARCH snapshot_gc USING INDEX snapshot_gc_due (origin=?). */
  async collectableKeys(origin: string, limit: number): Promise<string[]> {
    const { results } = await this.#db.prepare("SELECT key FROM snapshot_gc WHERE origin = ?1 LIMIT ?2").bind(origin, limit).all<{ key: string }>();
    return results.map((r) => r.key);
  }

  async dropKeys(origin: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#db
      .prepare("DELETE FROM snapshot_gc WHERE key IN (SELECT value FROM json_each(?2)) AND origin = ?1")
      .bind(origin, JSON.stringify(keys))
      .run();
  }

  async purgeState(origin: string, limit: number): Promise<boolean> {
    const db = this.#db;
    const statements = BY_ORIGIN.map(([table, key]) =>
      db.prepare(`DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE origin = ?1 LIMIT ?2)`).bind(origin, limit),
    );
    statements.push(
      db.prepare("DELETE FROM jobs WHERE kind IN (SELECT value FROM json_each(?2)) AND origin = ?1").bind(origin, JSON.stringify(SITE_JOB_KINDS)),
    );
    // The mirrors: the site's own (migration 0031: owner = the site), and rows from before it that remembered the site
    // (owner '': a registered site is never one of the deployment's SITES, whose mirrors keep owner ''). Another site
    // naming the same URL keeps its own rows and its own mirror job (`mirrorTarget`).
    const mine = "owner = ?1 OR (owner = '' AND site = ?1)";
    const named = `SELECT owner, url FROM mirrors WHERE ${mine}`;
    statements.push(
      // Its mirror jobs: targets `<site> <url>` (src/jobs/messages.ts `mirrorTarget`), a range of the key (' ' < '!').
      db.prepare(`DELETE FROM jobs WHERE kind = 'mirror' AND origin > ?1 || ' ' AND origin < ?1 || '!'`).bind(origin),
      db
        .prepare(
          `DELETE FROM mirror_children WHERE (owner, url, n) IN (SELECT owner, url, n FROM mirror_children WHERE (owner, url) IN (${named}) LIMIT ?2)`,
        )
        .bind(origin, limit),
      // A mirror's row goes once its children are gone.
      db
        .prepare(
          `DELETE FROM mirrors WHERE (owner, url) IN (${named})
             AND NOT EXISTS (SELECT 1 FROM mirror_children c WHERE c.owner = mirrors.owner AND c.url = mirrors.url)`,
        )
        .bind(origin),
    );
    const results = await db.batch(statements);
    let left = results.some((r) => (r.meta.changes ?? 0) >= limit);
    // What is left of the mirrors (children beyond this statement's rows), seen by one read.
    const mirrorsLeft = await db.prepare(`SELECT 1 FROM mirrors WHERE ${mine} LIMIT 1`).bind(origin).first();
    if (mirrorsLeft) left = true;
    const syncsDone = await this.#purgeSyncs(origin, limit);
    return syncsDone && !left;
  }

  /** The syncs scoped to the site alone: their seen rows, then the sync. true when none is left. */
  async #purgeSyncs(origin: string, limit: number): Promise<boolean> {
    const { results } = await this.#db
      .prepare("SELECT id FROM syncs WHERE json_extract(scope, '$.sites') = json_array(?1) LIMIT ?2")
      .bind(origin, SYNCS_PER_STEP + 1)
      .all<{ id: string }>();
    const ids = results.slice(0, SYNCS_PER_STEP).map((r) => r.id);
    let left = results.length > SYNCS_PER_STEP;
    for (const id of ids) {
      const { meta } = await this.#db
        .prepare("DELETE FROM sync_seen WHERE (sync, id) IN (SELECT sync, id FROM sync_seen WHERE sync = ?1 LIMIT ?2)")
        .bind(id, limit)
        .run();
      if ((meta.changes ?? 0) >= limit) left = true;
      else await this.#db.prepare("DELETE FROM syncs WHERE id = ?1").bind(id).run();
    }
    return !left;
  }
}
