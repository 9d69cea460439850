/** News sitemaps from D1: ranges of the partial index urls_news (records with news data only). */
import type { StoredRecord } from "../../core/types.ts";
import type { NewsIndex, NewsStats } from "../../store/port.ts";
import { type D1Observer, RECORD_COLUMNS, type RecordRow, storedRecord } from "./rows.ts";
import { EVERY_ROW, type ServedUnder, servedRow } from "./served.ts";

export class D1NewsIndex implements NewsIndex {
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;
  readonly #servedUnder: ServedUnder;

  constructor(db: D1Database, observe?: D1Observer, servedUnder: ServedUnder = EVERY_ROW) {
    this.#db = db;
    this.#observe = observe;
    this.#servedUnder = servedUnder;
  }

  /**
   * Articles of one site published in [sinceMs, untilMs] (news.publication_date), newest first,
   * `limit` from `offset`. A 2-day window is small, so the OFFSET costs a few thousand index
   * entries at most.
   */
  async records(origin: string, sinceMs: number, untilMs: number, offset: number, limit: number): Promise<StoredRecord[]> {
    const served = await this.#servedUnder();
    if (served === null) return [];
    const { results, meta } = await this.#db
      .prepare(
        `SELECT ${RECORD_COLUMNS} FROM urls
         WHERE origin = ?1 AND news_at >= ?2 AND news_at <= ?3 AND deleted = 0 AND ${servedRow("urls", "?6")}
         ORDER BY news_at DESC, id DESC LIMIT ?4 OFFSET ?5`,
      )
      .bind(origin, Math.ceil(sinceMs / 1000), Math.floor(untilMs / 1000), limit, offset, served)
      .all<RecordRow>();
    this.#observe?.(meta);
    return results.map(storedRecord);
  }

  /** Counts of the news window (and one window before it, to date the last article that left it). */
  async stats(origin: string, sinceMs: number, untilMs: number): Promise<NewsStats> {
    const since = Math.ceil(sinceMs / 1000);
    const until = Math.floor(untilMs / 1000);
    const served = await this.#servedUnder();
    if (served === null) return { count: 0, lastUpdated: 0, newestPublication: 0, lastExpiredPublication: 0 };
    const row = await this.#db
      .prepare(
        `SELECT COUNT(CASE WHEN news_at >= ?2 AND deleted = 0 THEN 1 END) AS count,
                MAX(CASE WHEN news_at >= ?2 THEN updated_at END) AS last_updated,
                MAX(CASE WHEN news_at >= ?2 AND deleted = 0 THEN news_at END) AS newest,
                MAX(CASE WHEN news_at < ?2 AND deleted = 0 THEN news_at END) AS last_expired
         FROM urls WHERE origin = ?1 AND news_at >= ?4 AND news_at <= ?3 AND ${servedRow("urls", "?5")}`,
      )
      .bind(origin, since, until, since - (until - since), served)
      .first<{ count: number; last_updated: number | null; newest: number | null; last_expired: number | null }>();
    return {
      count: row?.count ?? 0,
      lastUpdated: row?.last_updated ?? 0,
      newestPublication: (row?.newest ?? 0) * 1000,
      lastExpiredPublication: (row?.last_expired ?? 0) * 1000,
    };
  }
}
