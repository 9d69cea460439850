/**
 * Search Console's sitemap status in D1 (migrations/0008_gsc_status.sql, 0012: counts may be NULL
 * for unknown): per site, the last good `sitemaps.list` answers as rows, and the state of the reads.
 */
import type { GscStatusStore, ReadState, SitemapReport } from "../../gsc/store.ts";

interface SitemapRow {
  path: string;
  last_submitted: number | null;
  last_downloaded: number | null;
  is_pending: number;
  is_index: number;
  errors: number | null;
  warnings: number | null;
  contents: string;
}

interface ReadRow {
  origin: string;
  read_at: number | null;
  ok_at: number | null;
  status: number | null;
  error: string | null;
  failures: number;
  next_at: number;
  dropped: number;
}

/**
 * Rows per INSERT: they travel as one JSON parameter (D1 allows 100 bound parameters but 2 MB per
 * value), so a site's 2,050 rows take 5 statements, not 190. A row is ≤ ~2.5 KB (a 2,048-character
 * path and 16 content types), so 500 rows stay well under 2 MB.
 */
const ROWS_PER_INSERT = 500;
const MAX_ERROR_CHARS = 1000;

function contentsOf(text: string): SitemapReport["contents"] {
  try {
    const list = JSON.parse(text) as unknown;
    return Array.isArray(list) ? (list as SitemapReport["contents"]) : [];
  } catch {
    return [];
  }
}

export class D1GscStatusStore implements GscStatusStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async state(origin: string): Promise<ReadState | null> {
    const r = await this.#db.prepare("SELECT * FROM gsc_reads WHERE origin = ?1").bind(origin).first<ReadRow>();
    return (
      r && {
        origin: r.origin,
        readAt: r.read_at,
        okAt: r.ok_at,
        status: r.status,
        error: r.error,
        failures: r.failures,
        nextAt: r.next_at,
        dropped: r.dropped,
      }
    );
  }

  #stateStatement(s: ReadState): D1PreparedStatement {
    return this.#db
      .prepare(
        `INSERT INTO gsc_reads (origin, read_at, ok_at, status, error, failures, next_at, dropped) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (origin) DO UPDATE SET read_at = excluded.read_at, ok_at = excluded.ok_at, status = excluded.status,
           error = excluded.error, failures = excluded.failures, next_at = excluded.next_at, dropped = excluded.dropped`,
      )
      .bind(s.origin, s.readAt, s.okAt, s.status, s.error === null ? null : s.error.slice(0, MAX_ERROR_CHARS), s.failures, s.nextAt, s.dropped);
  }

  async saveState(state: ReadState): Promise<void> {
    await this.#stateStatement(state).run();
  }

  /** One batch (one transaction): the old rows go only if the new ones and the state are written. */
  async saveRead(state: ReadState, sitemaps: readonly SitemapReport[]): Promise<void> {
    const statements = [this.#db.prepare("DELETE FROM gsc_sitemaps WHERE origin = ?1").bind(state.origin)];
    for (let i = 0; i < sitemaps.length; i += ROWS_PER_INSERT) {
      const rows = sitemaps
        .slice(i, i + ROWS_PER_INSERT)
        .map((m) => [
          m.path,
          m.lastSubmitted,
          m.lastDownloaded,
          m.isPending ? 1 : 0,
          m.isSitemapsIndex ? 1 : 0,
          m.errors,
          m.warnings,
          JSON.stringify(m.contents),
        ]);
      statements.push(
        this.#db
          .prepare(
            `INSERT INTO gsc_sitemaps (origin, path, last_submitted, last_downloaded, is_pending, is_index, errors, warnings, contents)
             SELECT ?1, r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, r.value ->> 4, r.value ->> 5, r.value ->> 6, r.value ->> 7
             FROM json_each(?2) AS r WHERE true ON CONFLICT (origin, path) DO NOTHING`,
          )
          .bind(state.origin, JSON.stringify(rows)),
      );
    }
    statements.push(this.#stateStatement(state));
    await this.#db.batch(statements);
  }

  async sitemaps(origin: string): Promise<SitemapReport[]> {
    const { results } = await this.#db.prepare("SELECT * FROM gsc_sitemaps WHERE origin = ?1 ORDER BY path").bind(origin).all<SitemapRow>();
    return results.map((r) => ({
      path: r.path,
      lastSubmitted: r.last_submitted,
      lastDownloaded: r.last_downloaded,
      isPending: r.is_pending === 1,
      isSitemapsIndex: r.is_index === 1,
      errors: r.errors,
      warnings: r.warnings,
      contents: contentsOf(r.contents),
    }));
  }
}
