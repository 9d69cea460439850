/**
 * The housekeeping's reads and deletes in D1 (src/housekeeping/store.ts, migration 0016). Each is
 * one statement that reads about what it returns or removes: index seeks and ranges, deletes by
 * primary key (EXPLAIN QUERY PLAN of each is in the comments).
 */
import type { HousekeepingStore, JobKey, SavedCursor, SiteLitter } from "../../housekeeping/store.ts";
import type { ChangeStamp } from "../../store/port.ts";

/** Job rows per delete: two bound parameters each, and the time (D1 binds at most 100). */
const JOBS_PER_DROP = 49;

export class D1Housekeeping implements HousekeepingStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async cursors(): Promise<Map<string, SavedCursor>> {
    const { results } = await this.#db
      .prepare("SELECT task, cursor, updated_at FROM housekeeping")
      .all<{ task: string; cursor: string; updated_at: number }>();
    return new Map(results.map((r) => [r.task, { cursor: r.cursor, at: r.updated_at }]));
  }

  async saveCursor(task: string, cursor: string, now: number): Promise<void> {
    await this.#db
      .prepare(
        "INSERT INTO housekeeping (task, cursor, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (task) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at",
      )
      .bind(task, cursor, now)
      .run();
  }

  /**
   * Per site, the first entry of its range in url_moves_site and in urls_tombstones, and its row of
   * housekeeping_sites: SEARCH url_moves USING COVERING INDEX url_moves_site (origin=?), SEARCH urls
   * USING COVERING INDEX urls_tombstones (origin=?), SEARCH housekeeping_sites USING PRIMARY KEY.
   * INDEXED BY keeps the planner off urls_site_changed, which would read the site's live rows up to
   * its oldest tombstone.
   */
  async litter(origins: readonly string[]): Promise<SiteLitter[]> {
    if (origins.length === 0) return [];
    const { results } = await this.#db
      .prepare(
        `SELECT s.value AS origin,
           (SELECT seq FROM url_moves WHERE origin = s.value ORDER BY seq LIMIT 1) AS oldest_move,
           (SELECT updated_at FROM urls INDEXED BY urls_tombstones WHERE origin = s.value AND deleted = 1 ORDER BY updated_at LIMIT 1) AS oldest_tombstone,
           (SELECT seen FROM housekeeping_sites WHERE origin = s.value) AS seen
         FROM json_each(?1) AS s ORDER BY s.key`,
      )
      .bind(JSON.stringify(origins))
      .all<{ origin: string; oldest_move: number | null; oldest_tombstone: number | null; seen: string | null }>();
    return results.map((r) => ({ origin: r.origin, oldestMove: r.oldest_move, oldestTombstone: r.oldest_tombstone, seen: r.seen }));
  }

  async saveSite(origin: string, seen: string, now: number): Promise<void> {
    await this.#db
      .prepare(
        "INSERT INTO housekeeping_sites (origin, seen, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (origin) DO UPDATE SET seen = excluded.seen, updated_at = excluded.updated_at",
      )
      .bind(origin, seen, now)
      .run();
  }

  /** SEARCH url_moves USING INTEGER PRIMARY KEY, from SEARCH url_moves USING COVERING INDEX url_moves_site (origin=? AND seq<?). */
  async trimMoves(origin: string, through: number, limit: number): Promise<number> {
    const { meta } = await this.#db
      .prepare("DELETE FROM url_moves WHERE seq IN (SELECT seq FROM url_moves WHERE origin = ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3)")
      .bind(origin, through, limit)
      .run();
    return meta.changes ?? 0;
  }

  /**
   * SEARCH urls USING INTEGER PRIMARY KEY, from SEARCH urls USING INDEX urls_tombstones
   * (origin=? AND updated_at<?): the tombstones of the last stamp past `through.key`, and those
   * numbered past `through.seq` (a commit cursor's bound: a change stamped behind the cursor but
   * committed after it), are read and kept.
   */
  async purgeTombstones(origin: string, through: ChangeStamp, limit: number): Promise<number> {
    const { meta } = await this.#db
      .prepare(
        `DELETE FROM urls WHERE id IN (
           SELECT id FROM urls INDEXED BY urls_tombstones
           WHERE origin = ?1 AND deleted = 1 AND updated_at <= ?2 AND (updated_at < ?2 OR id <= ?3) AND (?5 IS NULL OR seq <= ?5)
           ORDER BY updated_at LIMIT ?4)`,
      )
      .bind(origin, through.stamp, Math.min(through.key, Number.MAX_SAFE_INTEGER), limit, through.seq ?? null)
      .run();
    return meta.changes ?? 0;
  }

  /** SEARCH jobs USING PRIMARY KEY ((kind,origin)>(?,?)): a keyset page of the table's key. */
  async jobs(after: JobKey | null, limit: number): Promise<JobKey[]> {
    const { results } = await this.#db
      .prepare("SELECT kind, origin FROM jobs WHERE (kind, origin) > (?1, ?2) ORDER BY kind, origin LIMIT ?3")
      .bind(after?.kind ?? "", after?.origin ?? "", limit)
      .all<JobKey>();
    return results;
  }

  /** MULTI-INDEX OR of SEARCH jobs USING PRIMARY KEY (kind=? AND origin=?). */
  async dropJobs(rows: readonly JobKey[], now: number): Promise<number> {
    if (rows.length === 0) return 0;
    if (rows.length > JOBS_PER_DROP) throw new RangeError(`at most ${JOBS_PER_DROP} job rows per statement`);
    const keys = rows.map((_, i) => `(kind = ?${2 * i + 2} AND origin = ?${2 * i + 3})`).join(" OR ");
    const { meta } = await this.#db
      .prepare(`DELETE FROM jobs WHERE due_at <= ?1 AND (${keys})`)
      .bind(now, ...rows.flatMap((r) => [r.kind, r.origin]))
      .run();
    return meta.changes ?? 0;
  }
}
