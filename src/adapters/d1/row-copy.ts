/**
 * A move's copy between two D1 databases of one site (RowCopy, src/partitions/rebalance.ts): rows
 * read and written as stored, stamp and source included, so a row in the new database says when
 * it was written and who brought it exactly as in the old one. "Newer" is the old home's commit
 * order: a copied row keeps the `seq` of the row it copies (`copied_seq`, migration 0023), and a
 * copy goes over another copy of an earlier commit only, never over a row written here.
 */
import { utf8Length } from "../../core/escape.ts";
import { COPY_PAGE_CHARS as PAGE_CHARS } from "../../core/limits.ts";
import type { CopiedRow, RowCopy, ScanPosition, SequencedChange } from "../../store/port.ts";
import { changesAfterStatement, sequenceHead } from "./sequence.ts";
import { RETURNING_ROWS } from "./writer.ts";

interface Row {
  id: number;
  origin: string;
  section: string;
  loc: string;
  lastmod: string | null;
  changefreq: string | null;
  priority: number | null;
  ext: string | null;
  size: number;
  updated_at: number;
  deleted: number;
  source: string | null;
  seq: number;
}

const COLUMNS = "id, origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at, deleted, source, seq";
/**
 * Rows and locs go to D1 as one JSON parameter a statement (json_each), not ~10 bound values a row:
 * a move's writes cost a statement per chunk, not per ten rows, against the 1,000 queries an
 * invocation may make. A chunk is measured in UTF-8 bytes, what D1 counts: about half its 2,000,000
 * bytes for a value at most (a CJK caption is 3 bytes a UTF-16 unit).
 */
const CHUNK_ROWS = 500;
const CHUNK_BYTES = 1_000_000;

/**
 * `items` as JSON arrays of at most CHUNK_ROWS items and CHUNK_BYTES UTF-8 bytes each, measured on
 * the parameter as bound (a row's `ext` is JSON text inside it: its quotes and backslashes escaped
 * again). An item larger alone goes in a chunk of its own; `put` never sends one (`tooLarge`).
 */
function chunks<T>(items: readonly T[]): string[] {
  const out: string[] = [];
  let chunk: string[] = [];
  let bytes = 0;
  for (const item of items) {
    const json = JSON.stringify(item);
    const size = itemBytes(json);
    if (chunk.length > 0 && (chunk.length >= CHUNK_ROWS || bytes + size > CHUNK_BYTES)) {
      out.push(`[${chunk.join(",")}]`);
      chunk = [];
      bytes = 0;
    }
    chunk.push(json);
    bytes += size;
  }
  if (chunk.length > 0) out.push(`[${chunk.join(",")}]`);
  return out;
}

const itemBytes = (json: string): number => utf8Length(json) + 1;

/** A row too large for a chunk of its own: copied by a statement of bound values, its `ext` one value as stored (~1 MB at most, what the admin API takes). */
const tooLarge = (tuple: readonly unknown[]): boolean => itemBytes(JSON.stringify(tuple)) > CHUNK_BYTES;

/** A row's text in SQL: what a page of rows costs the isolate, as PAGE_CHARS counts it. */
const ROW_CHARS = "length(loc) + COALESCE(length(ext), 0) + 200";

type BoundedRow = Row & { run: number; total: number };

/**
 * Up to the LIMIT in `where` of the site's rows, then only those whose text before them is under
 * the budget (`run`: the running text up to and including the row; `total`: the rows before the cut).
 * Rows read are the LIMIT's, as a keyset page's.
 */
const bounded = (where: string, budget: string): string =>
  `SELECT ${COLUMNS}, run, total FROM (
     SELECT ${COLUMNS}, w, SUM(w) OVER (ORDER BY section, id ROWS UNBOUNDED PRECEDING) AS run, COUNT(*) OVER () AS total
     FROM (SELECT ${COLUMNS}, ${ROW_CHARS} AS w FROM urls ${where})
   ) WHERE run - w < ${budget} ORDER BY section, id`;

const copiedRow = (r: Row): CopiedRow => ({
  key: r.id,
  origin: r.origin,
  section: r.section,
  loc: r.loc,
  lastmod: r.lastmod,
  changefreq: r.changefreq,
  priority: r.priority,
  ext: r.ext,
  size: r.size,
  updatedAt: r.updated_at,
  deleted: r.deleted === 1,
  source: r.source,
  seq: r.seq,
});

const PUT_HEAD = `INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at, deleted, source, copied_seq)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11
  FROM json_each(?1) WHERE true`;
const PUT_ALONE = `INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at, deleted, source, copied_seq)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)`;
const PUT_TAIL = {
  missing: " ON CONFLICT(loc) DO NOTHING",
  // The row keeps its key (the database's own); everything else becomes the newer row's.
  newer: ` ON CONFLICT(loc) DO UPDATE SET origin = excluded.origin, section = excluded.section, lastmod = excluded.lastmod,
    changefreq = excluded.changefreq, priority = excluded.priority, ext = excluded.ext, size = excluded.size,
    updated_at = excluded.updated_at, deleted = excluded.deleted, source = excluded.source, copied_seq = excluded.copied_seq
    WHERE urls.copied_seq < excluded.copied_seq`,
} as const;

export class D1RowCopy implements RowCopy {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /**
   * Keyset order as src/adapters/d1/site-pages.ts (the rest of the section by id, then the following sections), the
   * rows cut in SQL where their text passes PAGE_CHARS: a page of large records stays a few MB in
   * the isolate, whatever `limit` (5,000 rows of ~1 MB `ext` would be 5 GB), at least one row.
   */
  async page(origin: string, after: ScanPosition, limit: number): Promise<CopiedRow[]> {
    const within = await this.#db
      .prepare(bounded("WHERE origin = ?1 AND section = ?2 AND id > ?3 ORDER BY id LIMIT ?4", "?5"))
      .bind(origin, after.section, after.key, limit, PAGE_CHARS)
      .all<BoundedRow>();
    const rows = within.results;
    const used = rows.at(-1)?.run ?? 0;
    // Cut by its text, full, or its budget spent: the page ends here; else the section ran out.
    if (rows.length < (rows[0]?.total ?? 0) || rows.length === limit || used >= PAGE_CHARS) return rows.map(copiedRow);
    const later = await this.#db
      .prepare(bounded("WHERE origin = ?1 AND section > ?2 ORDER BY section, id LIMIT ?3", "?4"))
      .bind(origin, after.section, limit - rows.length, PAGE_CHARS - used)
      .all<BoundedRow>();
    return [...rows, ...later.results].map(copiedRow);
  }

  async rows(locs: readonly string[], movedIn?: number): Promise<CopiedRow[]> {
    // Marking needs no statement of its own: the read is the UPDATE's RETURNING (moved_in fires no change number).
    const statement =
      movedIn === undefined
        ? this.#db.prepare(`SELECT ${COLUMNS} FROM urls WHERE loc IN (SELECT value FROM json_each(?1))`)
        : this.#db.prepare(`UPDATE urls SET moved_in = ?2 WHERE loc IN (SELECT value FROM json_each(?1)) RETURNING ${COLUMNS}`);
    const statements = chunks(locs).map((json) => (movedIn === undefined ? statement.bind(json) : statement.bind(json, movedIn)));
    if (statements.length === 0) return [];
    const results = await this.#db.batch<Row>(statements);
    return results.flatMap((r) => r.results.map(copiedRow));
  }

  /** One statement: a page's keys (integers, at most the copy's page of them) as one JSON parameter. */
  async markMoved(keys: readonly number[], movedIn: number): Promise<void> {
    if (keys.length === 0) return;
    await this.#db.prepare("UPDATE urls SET moved_in = ?1 WHERE id IN (SELECT value FROM json_each(?2))").bind(movedIn, JSON.stringify(keys)).run();
  }

  /**
   * One statement: the ranges as one JSON parameter, each (CROSS JOIN: ranges first) a seek into the
   * moved rows' partial index (migration 0030): rows read are the moved rows, not the partition's.
   */
  async movedCounts(origin: string, ranges: readonly { section: string; firstKey: number; lastKey: number }[], movedIn: number): Promise<number[]> {
    if (ranges.length === 0) return [];
    const { results } = await this.#db
      .prepare(
        `SELECT r.key AS i, COUNT(*) AS n FROM json_each(?2) AS r
         CROSS JOIN urls AS u ON u.origin = ?1 AND u.section = r.value ->> 0 AND u.id BETWEEN r.value ->> 1 AND r.value ->> 2
         WHERE u.moved_in = ?3 AND u.deleted = 0 GROUP BY r.key`,
      )
      .bind(origin, JSON.stringify(ranges.map((r) => [r.section, r.firstKey, r.lastKey])), movedIn)
      .all<{ i: number; n: number }>();
    const counts = ranges.map(() => 0);
    for (const { i, n } of results) counts[i] = n;
    return counts;
  }

  async put(rows: readonly CopiedRow[], mode: "missing" | "newer"): Promise<number> {
    const statement = this.#db.prepare(`${PUT_HEAD}${PUT_TAIL[mode]} ${RETURNING_ROWS}`);
    const tuples = rows.map((r) => [
      r.origin,
      r.section,
      r.loc,
      r.lastmod,
      r.changefreq,
      r.priority,
      r.ext,
      r.size,
      r.updatedAt,
      r.deleted ? 1 : 0,
      r.source,
      r.seq,
    ]);
    const alone = this.#db.prepare(`${PUT_ALONE}${PUT_TAIL[mode]} ${RETURNING_ROWS}`);
    const large = tuples.filter(tooLarge);
    const chunked = large.length === 0 ? tuples : tuples.filter((t) => !tooLarge(t));
    return this.#changed([...chunks(chunked).map((json) => statement.bind(json)), ...large.map((t) => alone.bind(...t))]);
  }

  async deleteOlder(entries: readonly { loc: string; seq: number }[], now: number): Promise<number> {
    const statement = this.#db.prepare(
      `UPDATE urls SET deleted = 1, updated_at = ?1, copied_seq = v.seq
       FROM (SELECT value ->> 0 AS loc, value ->> 1 AS seq FROM json_each(?2)) AS v
       WHERE urls.loc = v.loc AND urls.deleted = 0 AND urls.copied_seq < v.seq ${RETURNING_ROWS}`,
    );
    return this.#changed(chunks(entries.map((e) => [e.loc, e.seq])).map((json) => statement.bind(now, json)));
  }

  /** Runs the statements in one batch (one transaction); the rows they changed. */
  async #changed(statements: D1PreparedStatement[]): Promise<number> {
    if (statements.length === 0) return 0;
    const results = await this.#db.batch(statements);
    return results.reduce((n, r) => n + r.results.length, 0);
  }

  head(): Promise<number> {
    return sequenceHead(this.#db);
  }

  async changesAfter(origin: string, after: number, limit: number): Promise<SequencedChange[]> {
    const { results } = await changesAfterStatement(this.#db, `seq, loc, deleted, ${ROW_CHARS} AS chars`)
      .bind(origin, after, limit)
      .all<{ seq: number; loc: string; deleted: number; chars: number }>();
    return results.map((r) => ({ seq: r.seq, loc: r.loc, deleted: r.deleted === 1, chars: r.chars }));
  }
}
