/** The regeneration's one pass over D1: full records with what planning needs, in (section, id) order. */
import type { RangeScan, ScanPosition, ScannedRecord } from "../../store/port.ts";
import { type D1Observer, RECORD_COLUMNS, type RecordRow, storedRecord } from "./rows.ts";
import { sitePages } from "./site-pages.ts";

/** Rows per query of the regeneration's scan: 10 queries per 50,000-URL shard. */
const SCAN_PAGE_ROWS = 5_000;

export class D1RangeScan implements RangeScan {
  readonly #db: D1Database;
  readonly #observe: D1Observer | undefined;

  constructor(db: D1Database, observe?: D1Observer) {
    this.#db = db;
    this.#observe = observe;
  }

  /**
   * Full records, tombstones included, with size and extension kinds, from `from` to `until`.
   * Within one section the range is bounded in SQL (rows read = rows returned); across sections
   * it runs to the end.
   */
  async *scan(origin: string, from: ScanPosition, until: ScanPosition | null): AsyncIterable<ScannedRecord> {
    type Row = RecordRow & { deleted: number; size: number; ext_kinds: number };
    const columns = `${RECORD_COLUMNS}, deleted, size, ext_kinds`;
    for await (const page of sitePages<Row>(
      this.#db,
      this.#observe,
      columns,
      origin,
      { section: from.section, after: from.key - 1 },
      until,
      SCAN_PAGE_ROWS,
    )) {
      for (const row of page) yield { ...storedRecord(row), deleted: row.deleted === 1, size: row.size, extKinds: row.ext_kinds };
    }
  }
}
