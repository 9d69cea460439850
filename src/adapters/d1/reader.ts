/** The D1 record reader: records of a shard, key rows of a site, one record by loc. */
import type { StoredRecord, UrlRow } from "../../core/types.ts";
import type { FoundRecord, KeyRow, RecordReader, ShardRange } from "../../store/port.ts";
import { yieldToEventLoop } from "../event-loop.ts";
import { nextPageRows } from "./row-pages.ts";
import { type D1Observer, RECORD_COLUMNS, type RecordRow, URL_ROW_COLUMNS, storedRecord } from "./rows.ts";
import { sitePages } from "./site-pages.ts";

/**
 * Rows per query of recordPages (the walk, the browser view, a KV-like consumer of records; a live
 * shard reads rowPages, sized by bytes: row-pages.ts). 2,500 keeps the two pages of objects alive
 * while the next one is read at ~10 MB even for 2 KB URLs (BENCHMARKS.md "Overlapped cold render").
 */
const D1_PAGE_ROWS = 2_500;
const KEY_PAGE_ROWS = 10_000;

interface KeyRowRaw {
  section: string;
  id: number;
  updated_at: number;
  deleted: number;
  size: number;
  ext_kinds: number;
}

export class D1RecordReader implements RecordReader {
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;
  readonly #pageRows: number;
  /** Rows per page when told (tests, the bench's page sweep); otherwise rowPages sizes pages by bytes. */
  readonly #fixedPageRows: number | null;

  constructor(db: D1Database, options: { observe?: D1Observer; pageRows?: number } = {}) {
    this.#db = db;
    this.#observe = options.observe;
    this.#pageRows = options.pageRows ?? D1_PAGE_ROWS;
    this.#fixedPageRows = options.pageRows ?? null;
  }

  /**
   * The shard's records, keyset page by keyset page, with the next page's query in flight while the
   * current page renders (reads and render overlap; BENCHMARKS.md "Overlapped cold render"). The
   * query is sent before the page renders (yieldToEventLoop). Exactly one page is ahead, so memory
   * stays at about two pages.
   */
  async *recordPages(range: ShardRange): AsyncIterable<readonly StoredRecord[]> {
    const stmt = this.#db.prepare(
      `SELECT ${RECORD_COLUMNS} FROM urls
       WHERE origin = ?1 AND section = ?2 AND id > ?3 AND id <= ?4 AND deleted = 0
       ORDER BY id LIMIT ?5`,
    );
    const page = (after: number): Promise<D1Result<RecordRow>> => {
      const query = stmt.bind(range.origin, range.section, after, range.lastKey, this.#pageRows).all<RecordRow>();
      // Handled at once: a consumer that stops early (client gone) never awaits the page ahead,
      // and a page that fails while the current one renders must not count as unhandled.
      query.catch(() => {});
      return query;
    };
    let pending: Promise<D1Result<RecordRow>> | null = page(range.firstKey - 1);
    while (pending !== null) {
      const { results, meta }: D1Result<RecordRow> = await pending;
      this.#observe?.(meta);
      const last: RecordRow | undefined = results[results.length - 1];
      // A short page, or one that reached the range's last key, is the last: no empty query after it.
      pending = last === undefined || results.length < this.#pageRows || last.id >= range.lastKey ? null : page(last.id);
      if (pending !== null) await yieldToEventLoop();
      yield results.map(storedRecord);
    }
  }

  /**
   * The shard's live records as `.raw()` row arrays of the rendering columns only (UrlRow): D1 hands
   * them over without building an object per row, and the renderer writes from them directly.
   * Pages are sized by the bytes of the rows already read (row-pages.ts), with the next page in
   * flight while the current one renders, as in recordPages. `raw()` returns no `meta`, so the
   * observer is told the rows each page returned (a keyset page by primary key reads those).
   */
  readonly rowPages = (range: ShardRange): AsyncIterable<readonly UrlRow[]> => this.#rowPages(range);

  async *#rowPages(range: ShardRange): AsyncIterable<readonly UrlRow[]> {
    const stmt = this.#db.prepare(
      `SELECT ${URL_ROW_COLUMNS} FROM urls
       WHERE origin = ?1 AND section = ?2 AND id > ?3 AND id <= ?4 AND deleted = 0
       ORDER BY id LIMIT ?5`,
    );
    const fixed = this.#fixedPageRows;
    const page = (after: number, rows: number): Promise<UrlRow[]> => {
      const query = stmt.bind(range.origin, range.section, after, range.lastKey, rows).raw<UrlRow>();
      query.catch(() => {}); // as in recordPages: a page ahead nobody awaits must not count as unhandled
      return query;
    };
    let asked = fixed ?? nextPageRows(null);
    let pending: Promise<UrlRow[]> | null = page(range.firstKey - 1, asked);
    while (pending !== null) {
      const rows: UrlRow[] = await pending;
      this.#observe?.({ rows_read: rows.length });
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < asked || last[0] >= range.lastKey) pending = null;
      else {
        asked = fixed ?? nextPageRows(rows);
        pending = page(last[0], asked);
        await yieldToEventLoop();
      }
      yield rows;
    }
  }

  /** Key rows, each with its extension kinds (EXT_* bits; the manifest ORs them per shard). */
  async *keyRows(origin: string, limit?: number): AsyncIterable<KeyRow> {
    const columns = "section, id, updated_at, deleted, size, ext_kinds";
    for await (const page of sitePages<KeyRowRaw>(this.#db, this.#observe, columns, origin, { section: "", after: -1 }, null, KEY_PAGE_ROWS, limit)) {
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

  async find(loc: string): Promise<FoundRecord | null> {
    const row = await this.#db
      .prepare(`SELECT ${RECORD_COLUMNS}, origin, deleted FROM urls WHERE loc = ?1`)
      .bind(loc)
      .first<RecordRow & { origin: string; deleted: number }>();
    return row === null ? null : { ...storedRecord(row), origin: row.origin, deleted: row.deleted === 1 };
  }
}
