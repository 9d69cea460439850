/**
 * Has a shard's range changed since a stamp? One range of the index urls_site_changed (origin,
 * updated_at): rows read = the site's changes after the stamp (those since the last regeneration),
 * not the shard's rows. INDEXED BY keeps the planner off the (origin, section, id) index, which
 * would read the whole shard.
 */
import type { RangeFreshness, ShardRange } from "../../store/port.ts";
import type { D1Observer } from "./rows.ts";

export class D1RangeFreshness implements RangeFreshness {
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;

  constructor(db: D1Database, observe?: D1Observer) {
    this.#db = db;
    this.#observe = observe;
  }

  async changedAfter(range: ShardRange, stamp: number): Promise<boolean> {
    const { results, meta } = await this.#db
      .prepare(
        `SELECT 1 AS hit FROM urls INDEXED BY urls_site_changed
         WHERE origin = ?1 AND updated_at > ?2 AND section = ?3 AND id >= ?4 AND id <= ?5 LIMIT 1`,
      )
      .bind(range.origin, stamp, range.section, range.firstKey, range.lastKey)
      .all<{ hit: number }>();
    this.#observe?.(meta);
    return results.length > 0;
  }
}
