/**
 * How many rows the D1 reader asks for in its next page of a shard's render rows: sized by bytes,
 * so a page holds about the same memory whatever the URLs are like. ~10,000 rows of a typical shard
 * (about 150 bytes of row text each) take a 50,000-URL shard in 6 queries instead of 20 of
 * 2,500 rows, and each query costs D1 its fixed overhead once per page; URLs of 2 KB get pages of
 * ~700 rows, so the two pages alive (one rendering, one in flight) stay near 3 MB of text.
 */
import type { UrlRow } from "../../core/types.ts";

/** Row text (UTF-16 units of the strings, plus a fixed share per row) a page aims at. */
const PAGE_TEXT_BYTES = 1_500_000;
/** The first page, before any row tells how large rows are: small, so rendering starts at once. */
export const FIRST_PAGE_ROWS = 1_000;
const MIN_PAGE_ROWS = 250;
const MAX_PAGE_ROWS = 20_000;
/** Per row besides its strings: the key, priority, array and the markup it renders to. */
const ROW_OVERHEAD = 40;

/** Rows of the next page after `last` (the page just read; `null` before the first). */
export function nextPageRows(last: readonly UrlRow[] | null): number {
  if (last === null || last.length === 0) return FIRST_PAGE_ROWS;
  let text = 0;
  for (const row of last) text += ROW_OVERHEAD + row[1].length + (row[2]?.length ?? 0) + (row[5]?.length ?? 0);
  const perRow = text / last.length;
  return Math.max(MIN_PAGE_ROWS, Math.min(MAX_PAGE_ROWS, Math.floor(PAGE_TEXT_BYTES / perRow)));
}
