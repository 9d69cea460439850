/** The Atom feed's records from D1: a range of the index urls_site_changed, newest first. */
import type { StoredRecord } from "../../core/types.ts";
import type { RecentIndex } from "../../store/port.ts";
import { type D1Observer, RECORD_COLUMNS, type RecordRow, storedRecord } from "./rows.ts";
import { EVERY_ROW, type ServedUnder, servedRow } from "./served.ts";

export class D1RecentIndex implements RecentIndex {
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;
  readonly #servedUnder: ServedUnder;

  constructor(db: D1Database, observe?: D1Observer, servedUnder: ServedUnder = EVERY_ROW) {
    this.#db = db;
    this.#observe = observe;
    this.#servedUnder = servedUnder;
  }

  async records(origin: string, limit: number): Promise<StoredRecord[]> {
    const served = await this.#servedUnder();
    if (served === null) return [];
    const { results, meta } = await this.#db
      .prepare(
        `SELECT ${RECORD_COLUMNS} FROM urls WHERE origin = ?1 AND deleted = 0 AND ${servedRow("urls", "?3")} ORDER BY updated_at DESC, id DESC LIMIT ?2`,
      )
      .bind(origin, limit, served)
      .all<RecordRow>();
    this.#observe?.(meta);
    return results.map(storedRecord);
  }
}
