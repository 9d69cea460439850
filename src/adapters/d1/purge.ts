/** Removing rows a partition gave away in a move (src/partitions/purge.ts): by key, no tombstone, nothing announced. */
import type { RangeScan, RowPurge } from "../../store/port.ts";

/** Keys inlined per statement: integers from the store's own scan (D1 binds at most 100 parameters; 5,000 keys ≈ 50 KB of SQL). */
const KEYS_PER_STATEMENT = 5_000;

export class D1RowPurge implements RowPurge {
  readonly #db: D1Database;
  readonly rows: RangeScan;

  constructor(db: D1Database, rows: RangeScan) {
    this.#db = db;
    this.rows = rows;
  }

  async purge(origin: string, keys: readonly number[]): Promise<number> {
    if (keys.length === 0) return 0;
    for (const key of keys) if (!Number.isSafeInteger(key)) throw new TypeError(`not a row key: ${key}`);
    const statements: D1PreparedStatement[] = [];
    for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) {
      const list = keys.slice(i, i + KEYS_PER_STATEMENT).join(",");
      // Found by id (the primary key); `+origin` keeps SQLite from walking the site's rows by an origin index instead.
      statements.push(this.#db.prepare(`DELETE FROM urls WHERE id IN (${list}) AND +origin = ?1`).bind(origin));
    }
    const results = await this.#db.batch(statements);
    return results.reduce((n, r) => n + (r.meta.changes ?? 0), 0);
  }
}
