/** D1UrlSource: URL records read from D1 by keyset pagination. */
import type { RecordExtensions } from "../core/extensions/types.ts";
import type { Changefreq, StoredRecord } from "../core/types.ts";
import type { NewsStats } from "../formats/sources.ts";
import type { KeyRow, ShardRange, UrlSource } from "./source.ts";
import type { ChangeCursor, ChangeFeed, ChangePage, RangeScanner, ScanPosition, ScannedRecord } from "../regen/source.ts";

/**
 * Rows per query. 2,500 keeps a full 50,000-URL shard at 20 queries (Free plan: 50 per invocation)
 * and a page of even 2 KB URLs at ~5 MB of memory.
 */
export const D1_PAGE_ROWS = 2_500;
const KEY_PAGE_ROWS = 10_000;
/** Rows per query of the regeneration's scan (src/regen): 10 queries per 50,000-URL shard. */
const SCAN_PAGE_ROWS = 5_000;

interface RecordRow {
  id: number;
  section: string;
  loc: string;
  lastmod: string | null;
  changefreq: Changefreq | null;
  priority: number | null;
  /** Extension JSON as validated at write time (src/core/extensions/validate.ts). */
  ext: string | null;
  updated_at: number;
}

interface KeyRowRaw {
  section: string;
  id: number;
  updated_at: number;
  deleted: number;
  size: number;
  ext_kinds: number;
}

/** Columns of a record read for rendering. */
const RECORD_COLUMNS = "id, section, loc, lastmod, changefreq, priority, ext, updated_at";

function storedRecord(row: RecordRow): StoredRecord {
  return {
    key: row.id,
    section: row.section,
    loc: row.loc,
    lastmod: row.lastmod,
    changefreq: row.changefreq,
    priority: row.priority,
    ext: row.ext === null ? null : (JSON.parse(row.ext) as RecordExtensions),
    updatedAt: row.updated_at,
  };
}


/** Observes every D1 statement's `meta` (rows read, duration): for tests, logs and benchmarks. */
export type D1Observer = (meta: { rows_read?: number; duration?: number }) => void;

export class D1UrlSource implements UrlSource, ChangeFeed, RangeScanner {
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
      `SELECT ${RECORD_COLUMNS} FROM urls
       WHERE origin = ?1 AND section = ?2 AND id > ?3 AND id <= ?4 AND deleted = 0
       ORDER BY id LIMIT ?5`,
    );
    let after = range.firstKey - 1;
    for (;;) {
      const { results, meta } = await stmt
        .bind(range.origin, range.section, after, range.lastKey, this.#pageRows)
        .all<RecordRow>();
      this.#observe?.(meta);
      for (const row of results) yield storedRecord(row);
      if (results.length < this.#pageRows) return;
      after = results[results.length - 1]!.id;
    }
  }

  /** Key rows, each with its extension kinds (EXT_* bits; the manifest ORs them per shard). */
  async *keyRows(origin: string): AsyncIterable<KeyRow & { extKinds: number }> {
    for await (const page of this.#pages<KeyRowRaw>("section, id, updated_at, deleted, size, ext_kinds", origin, "", -1, null, KEY_PAGE_ROWS)) {
      for (const row of page) {
        yield {
          section: row.section,
          key: row.id,
          updatedAt: row.updated_at,
          deleted: row.deleted === 1,
          size: row.size,
          extKinds: row.ext_kinds,
        };
      }
    }
  }

  /**
   * Pages of a site's rows in (section, id) order after (section, after), up to `until` (inclusive).
   * Each page is two index ranges, so rows read = rows returned: the rest of the current section by
   * id, then the following sections. (A row-value `(section, id) > (?, ?)` is planned as
   * `section >= ?` and re-reads the section's earlier rows on every page: quadratic in a section.)
   */
  async *#pages<T extends { section: string; id: number }>(
    columns: string,
    origin: string,
    section: string,
    after: number,
    until: ScanPosition | null,
    pageRows: number,
  ): AsyncGenerator<T[]> {
    const within = this.#db.prepare(`SELECT ${columns} FROM urls WHERE origin = ?1 AND section = ?2 AND id > ?3 AND id <= ?4 ORDER BY id LIMIT ?5`);
    const later = this.#db.prepare(`SELECT ${columns} FROM urls WHERE origin = ?1 AND section > ?2 ORDER BY section, id LIMIT ?3`);
    const beyond = (row: T): boolean => until !== null && (row.section > until.section || (row.section === until.section && row.id > until.key));
    for (;;) {
      const last = until && until.section === section ? until.key : Number.MAX_SAFE_INTEGER;
      const first = await within.bind(origin, section, after, last, pageRows).all<T>();
      this.#observe?.(first.meta);
      let page = first.results;
      if (page.length < pageRows) {
        if (until && until.section <= section) {
          if (page.length > 0) yield page;
          return;
        }
        const want = pageRows - page.length;
        const next = await later.bind(origin, section, want).all<T>();
        this.#observe?.(next.meta);
        const kept = next.results.filter((row) => !beyond(row));
        page = [...page, ...kept];
        if (kept.length < want) {
          if (page.length > 0) yield page;
          return;
        }
      }
      yield page;
      const tail = page[page.length - 1]!;
      section = tail.section;
      after = tail.id;
    }
  }
  /**
   * Articles of one site published in [sinceMs, untilMs] (news.publication_date), newest first,
   * `limit` from `offset`. A range of the partial index urls_news: it holds only records with news
   * data, and a 2-day window is small, so the OFFSET costs a few thousand index entries at most.
   */
  async newsRecords(origin: string, sinceMs: number, untilMs: number, offset: number, limit: number): Promise<StoredRecord[]> {
    const { results, meta } = await this.#db
      .prepare(
        `SELECT ${RECORD_COLUMNS} FROM urls
         WHERE origin = ?1 AND news_at >= ?2 AND news_at <= ?3 AND deleted = 0
         ORDER BY news_at DESC, id DESC LIMIT ?4 OFFSET ?5`,
      )
      .bind(origin, Math.ceil(sinceMs / 1000), Math.floor(untilMs / 1000), limit, offset)
      .all<RecordRow>();
    this.#observe?.(meta);
    return results.map(storedRecord);
  }

  /** Counts of the news window (and one window before it, to date the last article that left it). */
  async newsStats(origin: string, sinceMs: number, untilMs: number): Promise<NewsStats> {
    const since = Math.ceil(sinceMs / 1000);
    const until = Math.floor(untilMs / 1000);
    const row = await this.#db
      .prepare(
        `SELECT COUNT(CASE WHEN news_at >= ?2 AND deleted = 0 THEN 1 END) AS count,
                MAX(CASE WHEN news_at >= ?2 THEN updated_at END) AS last_updated,
                MAX(CASE WHEN news_at >= ?2 AND deleted = 0 THEN news_at END) AS newest,
                MAX(CASE WHEN news_at < ?2 AND deleted = 0 THEN news_at END) AS last_expired
         FROM urls WHERE origin = ?1 AND news_at >= ?4 AND news_at <= ?3`,
      )
      .bind(origin, since, until, since - (until - since))
      .first<{ count: number; last_updated: number | null; newest: number | null; last_expired: number | null }>();
    return {
      count: row?.count ?? 0,
      lastUpdated: row?.last_updated ?? 0,
      newestPublication: (row?.newest ?? 0) * 1000,
      lastExpiredPublication: (row?.last_expired ?? 0) * 1000,
    };
  }

  /** The `limit` most recently changed live records of a site, newest first (index urls_site_changed). */
  async recentRecords(origin: string, limit: number): Promise<StoredRecord[]> {
    const { results, meta } = await this.#db
      .prepare(`SELECT ${RECORD_COLUMNS} FROM urls WHERE origin = ?1 AND deleted = 0 ORDER BY updated_at DESC, id DESC LIMIT ?2`)
      .bind(origin, limit)
      .all<RecordRow>();
    this.#observe?.(meta);
    return results.map(storedRecord);
  }

  /**
   * The change feed of the regeneration (src/regen/source.ts): rows of a site changed after a
   * cursor in (updated_at, id) order (index urls_site_changed), tombstones included, and the
   * section moves D1UrlWriter records in url_moves, as tombstones of the section left. Both reads
   * go in one batch.
   */
  async changes(origin: string, after: ChangeCursor | null, limit: number): Promise<ChangePage> {
    if (after === null) {
      const [stamp, moves] = await this.#db.batch<{ head: number | null }>([
        this.#db.prepare("SELECT MAX(updated_at) AS head FROM urls WHERE origin = ?1").bind(origin),
        this.#db.prepare("SELECT MAX(seq) AS head FROM url_moves WHERE origin = ?1").bind(origin),
      ]);
      this.#observe?.(stamp!.meta);
      this.#observe?.(moves!.meta);
      const cursor = { stamp: stamp!.results[0]?.head ?? 0, key: Number.MAX_SAFE_INTEGER, moveSeq: moves!.results[0]?.head ?? 0 };
      return { rows: [], cursor, done: true };
    }
    // (updated_at, id) > (stamp, key) as two index ranges, so rows read = rows returned: the rest
    // of the cursor's stamp by id, then later stamps (a row-value comparison would re-read ties).
    const columns = "section, id, updated_at, deleted, size";
    const [sameStamp, moved] = await this.#db.batch<unknown>([
      this.#db
        .prepare(`SELECT ${columns} FROM urls WHERE origin = ?1 AND updated_at = ?2 AND id > ?3 ORDER BY id LIMIT ?4`)
        .bind(origin, after.stamp, after.key, limit),
      this.#db
        .prepare("SELECT seq, section, id, updated_at FROM url_moves WHERE origin = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3")
        .bind(origin, after.moveSeq, limit),
    ]);
    this.#observe?.(sameStamp!.meta);
    this.#observe?.(moved!.meta);
    const urlRows = [...(sameStamp!.results as KeyRowRaw[])];
    if (urlRows.length < limit) {
      const later = await this.#db
        .prepare(`SELECT ${columns} FROM urls WHERE origin = ?1 AND updated_at > ?2 ORDER BY updated_at, id LIMIT ?3`)
        .bind(origin, after.stamp, limit - urlRows.length)
        .all<KeyRowRaw>();
      this.#observe?.(later.meta);
      urlRows.push(...later.results);
    }
    const moveRows = moved!.results as { seq: number; section: string; id: number; updated_at: number }[];
    const rows: KeyRow[] = moveRows.map((m) => ({ section: m.section, key: m.id, updatedAt: m.updated_at, deleted: true, size: 0 }));
    for (const r of urlRows) rows.push({ section: r.section, key: r.id, updatedAt: r.updated_at, deleted: r.deleted === 1, size: r.size });
    const lastUrl = urlRows[urlRows.length - 1];
    const lastMove = moveRows[moveRows.length - 1];
    return {
      rows,
      cursor: {
        stamp: lastUrl ? lastUrl.updated_at : after.stamp,
        key: lastUrl ? lastUrl.id : after.key,
        moveSeq: lastMove ? lastMove.seq : after.moveSeq,
      },
      done: urlRows.length < limit && moveRows.length < limit,
    };
  }

  /**
   * The regeneration's one pass (src/regen/source.ts): full records, tombstones included, with
   * size and extension kinds, from `from` to `until` in (section, id) order. Within one section the
   * range is bounded in SQL (rows read = rows returned); across sections it runs to the end.
   */
  async *scan(origin: string, from: ScanPosition, until: ScanPosition | null): AsyncIterable<ScannedRecord> {
    type Row = RecordRow & { deleted: number; size: number; ext_kinds: number };
    for await (const page of this.#pages<Row>(`${RECORD_COLUMNS}, deleted, size, ext_kinds`, origin, from.section, from.key - 1, until, SCAN_PAGE_ROWS)) {
      for (const row of page) yield { ...storedRecord(row), deleted: row.deleted === 1, size: row.size, extKinds: row.ext_kinds };
    }
  }
}
