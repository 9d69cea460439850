/** The crawler log in D1 (migrations/0021_crawler_log.sql): one statement per method. */
import { type CountSlot, type CrawlerLogStore, type RequestCount, type StoredFetch, isOk, slotsAt } from "../../crawlers/log-store.ts";
import type { CrawlerFetch } from "../../crawlers/types.ts";

// The SELECTs name their columns as StoredFetch does: rows are returned as read.
export class D1CrawlerLog implements CrawlerLogStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async recordFetches(fetches: readonly CrawlerFetch[]): Promise<void> {
    if (fetches.length === 0) return;
    const rows = fetches.map((f) => ({ ...f, minute: Math.floor(f.at / 60_000) * 60_000, ok: isOk(f.status) ? 1 : 0 }));
    await this.#db
      .prepare(
        `INSERT OR IGNORE INTO crawler_fetches (origin, crawler, document, minute, ok, at, path, status, bytes, source)
         SELECT value ->> 'origin', value ->> 'crawler', value ->> 'document', value ->> 'minute', value ->> 'ok',
                value ->> 'at', value ->> 'path', value ->> 'status', value ->> 'bytes', value ->> 'source'
         FROM json_each(?1)`,
      )
      .bind(JSON.stringify(rows))
      .run();
  }

  async addCounts(counts: readonly RequestCount[], now: number): Promise<void> {
    if (counts.length === 0) return;
    const { hour, day } = slotsAt(now);
    const rows = counts.flatMap((c) =>
      [hour, day].map((s) => ({
        origin: c.origin,
        crawler: c.crawler,
        verified: c.verified ? 1 : 0,
        slot: s.slot,
        period: s.period,
        requests: c.requests,
      })),
    );
    // A slot whose period has passed starts again from this count: the ring never grows.
    await this.#db
      .prepare(
        `INSERT INTO crawler_counts (origin, crawler, verified, slot, period, requests)
         SELECT value ->> 'origin', value ->> 'crawler', value ->> 'verified', value ->> 'slot', value ->> 'period', value ->> 'requests'
         FROM json_each(?1) WHERE true
         ON CONFLICT (origin, crawler, verified, slot) DO UPDATE SET
           requests = CASE WHEN crawler_counts.period = excluded.period THEN crawler_counts.requests + excluded.requests ELSE excluded.requests END,
           period = excluded.period`,
      )
      .bind(JSON.stringify(rows))
      .run();
  }

  async counts(origin: string): Promise<CountSlot[]> {
    const { results } = await this.#db
      .prepare("SELECT crawler, verified, slot, period, requests FROM crawler_counts WHERE origin = ?1")
      .bind(origin)
      .all<{ crawler: string; verified: number; slot: string; period: number; requests: number }>();
    return results.map((r) => ({ crawler: r.crawler, verified: r.verified === 1, slot: r.slot, period: r.period, requests: r.requests }));
  }

  async lastFetches(origin: string, since: number, limit: number): Promise<StoredFetch[]> {
    // SQLite takes the bare columns of an aggregate query from the row that holds the MAX.
    const { results } = await this.#db
      .prepare(
        `SELECT crawler, document, path, MAX(at) AS at, status, bytes, source FROM crawler_fetches
         WHERE origin = ?1 AND at >= ?2 GROUP BY crawler, document ORDER BY at DESC LIMIT ?3`,
      )
      .bind(origin, since, limit)
      .all<StoredFetch>();
    return results;
  }

  async failedFetches(origin: string, since: number, limit: number): Promise<StoredFetch[]> {
    const { results } = await this.#db
      .prepare(
        `SELECT crawler, document, path, at, status, bytes, source FROM crawler_fetches
         WHERE origin = ?1 AND at >= ?2 AND ok = 0 ORDER BY at DESC LIMIT ?3`,
      )
      .bind(origin, since, limit)
      .all<StoredFetch>();
    return results;
  }

  async startedAt(origin: string, now: number): Promise<number> {
    // One statement that also reads the kept time: the earliest of the first ask and the oldest fetch kept.
    const r = await this.#db
      .prepare(
        `INSERT INTO crawler_log_sites (origin, started_at)
           VALUES (?1, MIN(?2, COALESCE((SELECT MIN(at) FROM crawler_fetches WHERE origin = ?1), ?2)))
         ON CONFLICT (origin) DO UPDATE SET started_at = MIN(crawler_log_sites.started_at, excluded.started_at)
         RETURNING started_at`,
      )
      .bind(origin, now)
      .first<{ started_at: number }>();
    return r?.started_at ?? now;
  }

  async trim(before: number, limit: number): Promise<number> {
    const r = await this.#db
      .prepare(
        `DELETE FROM crawler_fetches WHERE (origin, crawler, document, minute, ok) IN (
           SELECT origin, crawler, document, minute, ok FROM crawler_fetches WHERE at < ?1 ORDER BY at LIMIT ?2)`,
      )
      .bind(before, limit)
      .run();
    return r.meta.changes;
  }
}
