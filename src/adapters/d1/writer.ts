/**
 * D1RecordWriter: batch writes of validated records. A batch is one D1 `batch()` — one transaction,
 * all or nothing — split into multi-row statements that respect D1's 100-parameter limit.
 */
import type { ValidRecord } from "../../core/validate.ts";
import { urlElementBytes } from "../../core/writers.ts";
import type { DeleteResult, RecordWriter, UpsertResult } from "../../store/port.ts";

const UPSERT_COLUMNS = 10;
const ROWS_PER_UPSERT = Math.floor(100 / UPSERT_COLUMNS);
const LOCS_PER_STATEMENT = 100;

/**
 * Insert or update by `loc`. The key of an existing loc never changes; `updated_at` moves only when
 * the content really changed (or a tombstone comes back), so re-sending a batch changes nothing.
 * `source` (who brought the record: NULL for the admin API, `mirror:<url>` for a mirror) is set
 * when a record is created or brought back, never taken over by a later writer: a mirror's scope
 * is what it brought in (src/store/port.ts, RecordSync).
 */
/**
 * Statements that change `urls` return a row per row they change: D1's `meta.changes` counts the
 * change feed's trigger writes too (migration 0023).
 */
export const RETURNING_ROWS = "RETURNING 1";
const UPSERT_HEAD = `INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at, source) VALUES `;
const CONTENT_CHANGED = `urls.deleted = 1 OR urls.lastmod IS NOT excluded.lastmod
     OR urls.changefreq IS NOT excluded.changefreq OR urls.priority IS NOT excluded.priority
     OR urls.ext IS NOT excluded.ext`;
const SET_CONTENT = `origin = excluded.origin, lastmod = excluded.lastmod,
    changefreq = excluded.changefreq, priority = excluded.priority, ext = excluded.ext,
    size = excluded.size, updated_at = excluded.updated_at,
    source = CASE WHEN urls.deleted = 1 THEN excluded.source ELSE urls.source END, deleted = 0`;
/** The section was named (by the record or a section rule): the record moves there. */
const UPSERT_TAIL = `
  ON CONFLICT(loc) DO UPDATE SET section = excluded.section, ${SET_CONTENT}
  WHERE urls.section IS NOT excluded.section OR ${CONTENT_CHANGED}`;
/**
 * The section is only DEFAULT_SECTION because nothing named one (ValidRecord.sectionDefaulted):
 * a record that exists keeps its section, so re-sending it never moves it; a tombstone brought
 * back is a new record and takes the default.
 */
const UPSERT_TAIL_KEEP_SECTION = `
  ON CONFLICT(loc) DO UPDATE SET section = CASE WHEN urls.deleted = 1 THEN excluded.section ELSE urls.section END, ${SET_CONTENT}
  WHERE ${CONTENT_CHANGED}`;

function extJson(record: ValidRecord): string | null {
  return record.ext && Object.keys(record.ext).length > 0 ? JSON.stringify(record.ext) : null;
}

/** A record's own columns of `urls`, in table order: section, loc, lastmod, changefreq, priority, ext, size (the bench seeders write them too). */
export function recordColumns(r: ValidRecord): [string, string, string | null, string | null, number | null, string | null, number] {
  return [r.section, r.loc, r.lastmod ?? null, r.changefreq ?? null, r.priority ?? null, extJson(r), urlElementBytes(r)];
}

function upsertStatements(db: D1Database, records: readonly ValidRecord[], now: number, source: string | null, tail: string): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < records.length; i += ROWS_PER_UPSERT) {
    const rows = records.slice(i, i + ROWS_PER_UPSERT);
    const values = rows.map(() => "(?,?,?,?,?,?,?,?,?,?)").join(",");
    const params = rows.flatMap((r) => [r.origin, ...recordColumns(r), now, source]);
    statements.push(db.prepare(`${UPSERT_HEAD}${values}${tail} ${RETURNING_ROWS}`).bind(...params));
  }
  return statements;
}

/**
 * Records moving to another section leave their old section's shard without a tombstone to say
 * so: these statements, run in the same batch before the upsert, note each live record whose
 * section is about to change in `url_moves` (old section, key, stamp), where the regeneration's
 * change feed finds it (migrations/0002_regeneration.sql). ≤ 49 records per statement.
 */
function moveStatements(db: D1Database, records: readonly ValidRecord[], now: number): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < records.length; i += 49) {
    const chunk = records.slice(i, i + 49);
    statements.push(
      db
        .prepare(
          `INSERT INTO url_moves (origin, section, id, updated_at)
           SELECT u.origin, u.section, u.id, ?1 FROM (VALUES ${chunk.map((_, j) => `(?${2 * j + 2}, ?${2 * j + 3})`).join(",")}) AS v
           JOIN urls AS u ON u.loc = v.column1
           WHERE u.section <> v.column2 AND u.deleted = 0`,
        )
        .bind(now, ...chunk.flatMap((r) => [r.loc, r.section])),
    );
  }
  return statements;
}

/**
 * `SELECT` statements counting which of `locs` exist (live and tombstoned), ≤ 100 locs each. Run
 * in the same batch as the writes, they see exactly the state the writes start from.
 */
function countStatements(db: D1Database, locs: readonly string[]): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < locs.length; i += LOCS_PER_STATEMENT) {
    const chunk = locs.slice(i, i + LOCS_PER_STATEMENT);
    statements.push(
      db
        .prepare(`SELECT COUNT(*) AS present, COALESCE(SUM(deleted), 0) AS dead FROM urls WHERE loc IN (${chunk.map((_, j) => `?${j + 1}`).join(",")})`)
        .bind(...chunk),
    );
  }
  return statements;
}

function deleteStatements(db: D1Database, locs: readonly string[], now: number): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < locs.length; i += LOCS_PER_STATEMENT - 1) {
    const chunk = locs.slice(i, i + LOCS_PER_STATEMENT - 1);
    statements.push(
      db
        .prepare(
          `UPDATE urls SET deleted = 1, updated_at = ?1 WHERE deleted = 0 AND loc IN (${chunk.map((_, j) => `?${j + 2}`).join(",")}) ${RETURNING_ROWS}`,
        )
        .bind(now, ...chunk),
    );
  }
  return statements;
}

const EMPTY_UPSERT: UpsertResult = { atomic: true, writes: 0, inserted: 0, updated: 0, unchanged: 0 };
const EMPTY_DELETE: DeleteResult = { atomic: true, writes: 0, deleted: 0, alreadyDeleted: 0, notFound: 0 };

export interface UpsertOptions {
  /** Who brings the records (see UPSERT_HEAD); null: the admin API. */
  source?: string | null;
  /** Statements run in the same transaction after the upserts (a sync notes the records it saw). */
  after?: readonly D1PreparedStatement[];
}

export class D1RecordWriter implements RecordWriter {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /**
   * Upserts validated records (distinct locs, as validateBatch guarantees) in one transaction.
   * The same batch reads how many of the locs exist first, so the counts describe exactly this
   * write.
   */
  async upsert(records: readonly ValidRecord[], now = Date.now(), options: UpsertOptions = {}): Promise<UpsertResult> {
    if (records.length === 0) return { ...EMPTY_UPSERT };
    const source = options.source ?? null;
    const named = records.filter((r) => r.sectionDefaulted !== true);
    const defaulted = records.filter((r) => r.sectionDefaulted === true);
    const counts = countStatements(
      this.#db,
      records.map((r) => r.loc),
    );
    const moves = moveStatements(this.#db, named, now);
    const upserts = [
      ...upsertStatements(this.#db, named, now, source, UPSERT_TAIL),
      ...upsertStatements(this.#db, defaulted, now, source, UPSERT_TAIL_KEEP_SECTION),
    ];
    const results = await this.#db.batch([...counts, ...moves, ...upserts, ...(options.after ?? [])]);
    const { present, dead } = existing(results.slice(0, counts.length));
    const written = summarise(results.slice(counts.length + moves.length, counts.length + moves.length + upserts.length));
    const inserted = records.length - present + dead;
    return {
      atomic: true,
      writes: written.rowsWritten,
      inserted,
      updated: written.changed - inserted,
      unchanged: records.length - written.changed,
    };
  }

  /** Marks locs deleted (tombstones) in one transaction; unknown or already deleted locs are no-ops. */
  async delete(locs: readonly string[], now = Date.now()): Promise<DeleteResult> {
    const distinct = [...new Set(locs)];
    if (distinct.length === 0) return { ...EMPTY_DELETE };
    const counts = countStatements(this.#db, distinct);
    const results = await this.#db.batch([...counts, ...deleteStatements(this.#db, distinct, now)]);
    const { present, dead } = existing(results.slice(0, counts.length));
    const written = summarise(results.slice(counts.length));
    return {
      atomic: true,
      writes: written.rowsWritten,
      deleted: written.changed,
      alreadyDeleted: dead,
      notFound: distinct.length - present,
    };
  }
}

function existing(results: D1Result[]): { present: number; dead: number } {
  let present = 0;
  let dead = 0;
  for (const r of results) {
    const row = (r.results as { present: number; dead: number }[])[0];
    present += row?.present ?? 0;
    dead += row?.dead ?? 0;
  }
  return { present, dead };
}

/** Rows inserted or changed (one returned each: RETURNING_ROWS), and rows written (the change feed's included). */
function summarise(results: D1Result[]): { changed: number; rowsWritten: number } {
  let changed = 0;
  let rowsWritten = 0;
  for (const r of results) {
    changed += r.results.length;
    rowsWritten += r.meta.rows_written ?? 0;
  }
  return { changed, rowsWritten };
}
