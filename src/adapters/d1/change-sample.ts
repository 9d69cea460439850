/**
 * The newest changes of a D1 site, bounded: the first `limit` entries of the index urls_site_changed
 * read backwards (updated_at DESC, id DESC), tombstones included in the bound and dropped here, so
 * one statement reads at most `limit` rows whatever the site's size (and the rows a partition
 * hides among them, migration 0024).
 */
import type { ChangeSample, SampledRecord } from "../../store/port.ts";
import type { D1Observer } from "./rows.ts";
import { EVERY_ROW, type ServedUnder, servedRow } from "./served.ts";

interface SampleRow {
  section: string;
  loc: string;
  lastmod: string | null;
  updated_at: number;
  deleted: number;
}

export class D1ChangeSample implements ChangeSample {
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;
  readonly #servedUnder: ServedUnder;

  constructor(db: D1Database, observe?: D1Observer, servedUnder: ServedUnder = EVERY_ROW) {
    this.#db = db;
    this.#observe = observe;
    this.#servedUnder = servedUnder;
  }

  async newest(origin: string, limit: number): Promise<SampledRecord[]> {
    const served = await this.#servedUnder();
    if (limit <= 0 || served === null) return [];
    const { results, meta } = await this.#db
      .prepare(
        `SELECT section, loc, lastmod, updated_at, deleted FROM urls WHERE origin = ?1 AND ${servedRow("urls", "?3")} ORDER BY updated_at DESC, id DESC LIMIT ?2`,
      )
      .bind(origin, limit, served)
      .all<SampleRow>();
    this.#observe?.(meta);
    return results.flatMap((r) => (r.deleted === 1 ? [] : [{ section: r.section, loc: r.loc, lastmod: r.lastmod, updatedAt: r.updated_at }]));
  }
}
