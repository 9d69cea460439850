/** The `urls` row shapes the D1 adapters read, and their mapping to the port's records. */
import type { RecordExtensions } from "../../core/extensions/types.ts";
import type { Changefreq, StoredRecord } from "../../core/types.ts";

/** Observes every D1 statement's `meta` (rows read, duration): for tests, logs and benchmarks. */
export type D1Observer = (meta: { rows_read?: number; duration?: number }) => void;

export interface RecordRow {
  id: number;
  section: string;
  loc: string;
  lastmod: string | null;
  changefreq: Changefreq | null;
  priority: number | null;
  /** Extension JSON as validated at write time (src/core/extensions/). */
  ext: string | null;
  updated_at: number;
}

/** Columns of a record read for rendering. */
export const RECORD_COLUMNS = "id, section, loc, lastmod, changefreq, priority, ext, updated_at";

/** Columns of a record read for rendering as a row array, in core/types.ts UrlRow's order. */
export const URL_ROW_COLUMNS = "id, loc, lastmod, changefreq, priority, ext";

export function storedRecord(row: RecordRow): StoredRecord {
  return {
    key: row.id,
    section: row.section,
    loc: row.loc,
    lastmod: row.lastmod,
    changefreq: row.changefreq,
    priority: row.priority,
    ext: row.ext === null ? null : (JSON.parse(row.ext) as RecordExtensions),
    updatedAt: row.updated_at,
  };
}
