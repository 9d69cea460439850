/** D1UrlSource: URL records read from D1 by keyset pagination. */
import type { Changefreq, StoredRecord } from "../core/types.ts";
import type { KeyRow, ShardRange, UrlSource } from "./source.ts";

/**
 * Rows per query. 2,500 keeps a full 50,000-URL shard at 20 queries (Free plan: 50 per invocation)
 * and a page of even 2 KB URLs at ~5 MB of memory.
 */
export const D1_PAGE_ROWS = 2_500;
const KEY_PAGE_ROWS = 10_000;

interface RecordRow {
  id: number;
  section: string;
  loc: string;
  lastmod: string | null;
  changefreq: Changefreq | null;
  priority: number | null;
  updated_at: number;
}

interface KeyRowRaw {
  section: string;
  id: number;
  updated_at: number;
  deleted: number;
  size: number;
}

/** Observes every D1 statement's `meta` (rows read, duration): for tests, logs and benchmarks. */
export type D1Observer = (meta: { rows_read?: number; duration?: number }) => void;

export class D1UrlSource implements UrlSource {
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;
  readonly #pageRows: number;

  constructor(db: D1Database, options: { observe?: D1Observer; pageRows?: number } = {}) {
    this.#db = db;
    this.#observe = options.observe;
    this.#pageRows = options.pageRows ?? D1_PAGE_ROWS;
  }

  async *records(range: ShardRange): AsyncIterable<StoredRecord> {
    const stmt = this.#db.prepare(
      `SELECT id, section, loc, lastmod, changefreq, priority, updated_at FROM urls
       WHERE origin = ?1 AND section = ?2 AND id > ?3 AND id <= ?4 AND deleted = 0
       ORDER BY id LIMIT ?5`,
    );
    let after = range.firstKey - 1;
    for (;;) {
      const { results, meta } = await stmt
        .bind(range.origin, range.section, after, range.lastKey, this.#pageRows)
        .all<RecordRow>();
      this.#observe?.(meta);
      for (const row of results) {
        yield {
          key: row.id,
          section: row.section,
          loc: row.loc,
          lastmod: row.lastmod,
          changefreq: row.changefreq,
          priority: row.priority,
          updatedAt: row.updated_at,
        };
      }
      if (results.length < this.#pageRows) return;
      after = results[results.length - 1]!.id;
    }
  }

  async *keyRows(origin: string): AsyncIterable<KeyRow> {
    // Row-value comparison keeps this a range scan on (origin, section, id) across sections.
    const stmt = this.#db.prepare(
      `SELECT section, id, updated_at, deleted, size FROM urls
       WHERE origin = ?1 AND (section, id) > (?2, ?3)
       ORDER BY section, id LIMIT ?4`,
    );
    let section = "";
    let after = -1;
    for (;;) {
      const { results, meta } = await stmt.bind(origin, section, after, KEY_PAGE_ROWS).all<KeyRowRaw>();
      this.#observe?.(meta);
      for (const row of results) {
        yield { section: row.section, key: row.id, updatedAt: row.updated_at, deleted: row.deleted === 1, size: row.size };
      }
      if (results.length < KEY_PAGE_ROWS) return;
      const last = results[results.length - 1]!;
      section = last.section;
      after = last.id;
    }
  }
}
