/**
 * D1UrlWriter: batch writes of validated records. A batch is one D1 `batch()` — one transaction,
 * all or nothing — split into multi-row statements that respect D1's 100-parameter limit.
 */
import type { ValidRecord } from "../core/validate.ts";
import { urlElementBytes } from "../core/writers.ts";

const UPSERT_COLUMNS = 9;
const ROWS_PER_UPSERT = Math.floor(100 / UPSERT_COLUMNS);
const LOCS_PER_STATEMENT = 100;

/**
 * Insert or update by `loc`. The key of an existing loc never changes; `updated_at` moves only when
 * the content really changed (or a tombstone comes back), so re-sending a batch changes nothing.
 */
const UPSERT_HEAD = `INSERT INTO urls (origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at) VALUES `;
const UPSERT_TAIL = `
  ON CONFLICT(loc) DO UPDATE SET
    origin = excluded.origin, section = excluded.section, lastmod = excluded.lastmod,
    changefreq = excluded.changefreq, priority = excluded.priority, ext = excluded.ext,
    size = excluded.size, updated_at = excluded.updated_at, deleted = 0
  WHERE urls.deleted = 1 OR urls.section IS NOT excluded.section OR urls.lastmod IS NOT excluded.lastmod
     OR urls.changefreq IS NOT excluded.changefreq OR urls.priority IS NOT excluded.priority
     OR urls.ext IS NOT excluded.ext`;

export function extJson(record: ValidRecord): string | null {
  return record.ext && Object.keys(record.ext).length > 0 ? JSON.stringify(record.ext) : null;
}

function upsertStatements(db: D1Database, records: readonly ValidRecord[], now: number): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < records.length; i += ROWS_PER_UPSERT) {
    const rows = records.slice(i, i + ROWS_PER_UPSERT);
    const values = rows.map(() => "(?,?,?,?,?,?,?,?,?)").join(",");
    const params = rows.flatMap((r) => [
      r.origin,
      r.section,
      r.loc,
      r.lastmod ?? null,
      r.changefreq ?? null,
      r.priority ?? null,
      extJson(r),
      urlElementBytes(r),
      now,
    ]);
    statements.push(db.prepare(UPSERT_HEAD + values + UPSERT_TAIL).bind(...params));
  }
  return statements;
}

function deleteStatements(db: D1Database, locs: readonly string[], now: number): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < locs.length; i += LOCS_PER_STATEMENT - 1) {
    const chunk = locs.slice(i, i + LOCS_PER_STATEMENT - 1);
    statements.push(
      db
        .prepare(`UPDATE urls SET deleted = 1, updated_at = ?1 WHERE deleted = 0 AND loc IN (${chunk.map((_, j) => `?${j + 2}`).join(",")})`)
        .bind(now, ...chunk),
    );
  }
  return statements;
}

export interface WriteSummary {
  /** Rows inserted or changed (D1 `meta.changes`). */
  changed: number;
  rowsWritten: number;
}

export class D1UrlWriter {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** Upserts validated records in one transaction. */
  async upsert(records: readonly ValidRecord[], now = Date.now()): Promise<WriteSummary> {
    if (records.length === 0) return { changed: 0, rowsWritten: 0 };
    return summarise(await this.#db.batch(upsertStatements(this.#db, records, now)));
  }

  /** Marks locs deleted (tombstones) in one transaction; unknown or already deleted locs are no-ops. */
  async delete(locs: readonly string[], now = Date.now()): Promise<WriteSummary> {
    if (locs.length === 0) return { changed: 0, rowsWritten: 0 };
    return summarise(await this.#db.batch(deleteStatements(this.#db, locs, now)));
  }
}

function summarise(results: D1Result[]): WriteSummary {
  let changed = 0;
  let rowsWritten = 0;
  for (const r of results) {
    changed += r.meta.changes ?? 0;
    rowsWritten += r.meta.rows_written ?? 0;
  }
  return { changed, rowsWritten };
}
