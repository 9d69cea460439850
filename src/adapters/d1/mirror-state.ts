/** Mirror state in D1 (migrations/0006_mirrors.sql). */
import type { MirrorCounts, MirrorState, MirrorStateStore } from "../../mirror/store.ts";

interface MirrorRow {
  url: string;
  etag: string | null;
  last_modified: string | null;
  sync_id: string | null;
  pass_etag: string | null;
  pass_last_modified: string | null;
  child: number;
  records_done: number;
  counts: string;
  checked_at: number | null;
  ok_at: number | null;
  error: string | null;
  error_at: number | null;
}

/** Index sitemaps per INSERT statement (3 parameters each, ≤ 100). */
const CHILDREN_PER_STATEMENT = 33;

export class D1MirrorStateStore implements MirrorStateStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async load(url: string): Promise<MirrorState | null> {
    const row = await this.#db.prepare("SELECT * FROM mirrors WHERE url = ?1").bind(url).first<MirrorRow>();
    if (row === null) return null;
    return {
      url: row.url,
      etag: row.etag,
      lastModified: row.last_modified,
      syncId: row.sync_id,
      passEtag: row.pass_etag,
      passLastModified: row.pass_last_modified,
      child: row.child,
      recordsDone: row.records_done,
      counts: JSON.parse(row.counts) as MirrorCounts,
      checkedAt: row.checked_at,
      okAt: row.ok_at,
      error: row.error,
      errorAt: row.error_at,
    };
  }

  async save(s: MirrorState): Promise<void> {
    await this.#db
      .prepare(
        `INSERT OR REPLACE INTO mirrors (url, etag, last_modified, sync_id, pass_etag, pass_last_modified, child, records_done, counts, checked_at, ok_at, error, error_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)`,
      )
      .bind(
        s.url,
        s.etag,
        s.lastModified,
        s.syncId,
        s.passEtag,
        s.passLastModified,
        s.child,
        s.recordsDone,
        JSON.stringify(s.counts),
        s.checkedAt,
        s.okAt,
        s.error,
        s.errorAt,
      )
      .run();
  }

  async setChildren(url: string, children: readonly string[]): Promise<void> {
    const statements = [this.#db.prepare("DELETE FROM mirror_children WHERE url = ?1").bind(url)];
    for (let i = 0; i < children.length; i += CHILDREN_PER_STATEMENT) {
      const chunk = children.slice(i, i + CHILDREN_PER_STATEMENT);
      statements.push(
        this.#db
          .prepare(`INSERT INTO mirror_children (url, n, child) VALUES ${chunk.map((_, j) => `(?${3 * j + 1}, ?${3 * j + 2}, ?${3 * j + 3})`).join(",")}`)
          .bind(...chunk.flatMap((child, j) => [url, i + j, child])),
      );
    }
    // Not one transaction (an index may list 50,000 sitemaps): a pass that dies here starts over.
    for (let i = 0; i < statements.length; i += 200) await this.#db.batch(statements.slice(i, i + 200));
  }

  async child(url: string, n: number): Promise<string | null> {
    const row = await this.#db.prepare("SELECT child FROM mirror_children WHERE url = ?1 AND n = ?2").bind(url, n).first<{ child: string }>();
    return row?.child ?? null;
  }

  async childCount(url: string): Promise<number> {
    return (await this.#db.prepare("SELECT COUNT(*) AS n FROM mirror_children WHERE url = ?1").bind(url).first<{ n: number }>())?.n ?? 0;
  }
}
