/**
 * Where the rows of a browser view page come from (docs/browser-view.md "Cost"). Each producer
 * yields the table's rows as HTML and returns what the page's footer says about them.
 *
 *   scanRows    records in order, counted (and filtered) one by one: news sitemaps, the feed, and a
 *               shard whose version has no digest at this location yet;
 *   keysetRows  one page of a shard from its page starts (the manifest's, or the digest's for a
 *               manifest planned before it kept them): a read of that page's key range, nothing
 *               before it;
 *   cachedPage  a page of a shard as the digest's pass stored it: no record read;
 *   cachedFilter a filter over the cached locs, then the cached pages of the rows it shows: no
 *               record read.
 *
 * `shardRows` picks one. A page is read by its key range from the manifest's page starts. A filter
 * over a shard without a digest reads it through once, and that one pass stores the digest: later
 * filters of the same version at this location read the pages they show, or nothing.
 */

import { VIEW_PAGE_ROWS } from "../../core/limits.ts";
import { type Source, eachItem, paged } from "../../core/source.ts";
import type { StoredRecord } from "../../core/types.ts";
import type { RecordReader, ShardRange } from "../../store/port.ts";
import type { ShardDigest, ViewCache } from "./view-cache.ts";
import { type DateColumn, type ViewRecord, cellsOf, matchLine, matchNeedle, matchText, numberedRow, rowCells, rowLine } from "./view-row.ts";

/** What the visitor asked for in the query string. */
export interface ViewQuery {
  /** 1-based page. */
  page: number;
  /** URL substring to keep (case-insensitive); "" keeps all. */
  q: string;
}

/** What the rows of a page were. */
interface RowsOutcome {
  /** Rows before the first shown one (the first shown is number skip + 1). */
  skip: number;
  shown: number;
  /** A next page exists. */
  more: boolean;
  /** Rows matching the filter in the whole document (with a filter). */
  matched: number;
}

export type Rows = AsyncGenerator<string, RowsOutcome, undefined>;

/**
 * A page of a shard is its key range from the digest, whatever was written since; rows that came
 * into the range after the digest was made are shown too, up to this many.
 */
const MAX_KEYSET_ROWS = 2 * VIEW_PAGE_ROWS;

/**
 * Records in order, filtered and counted. Unfiltered, it stops one record past the page; with
 * `sink` (a digest being built), or with a filter, it reads to the end.
 */
export async function* scanRows<R extends ViewRecord>(
  records: Source<R>,
  { page, q }: ViewQuery,
  dateColumn: DateColumn,
  sink: ((record: R, cells: string) => void) | null = null,
): Rows {
  const needle = matchNeedle(q);
  const skip = (page - 1) * VIEW_PAGE_ROWS;
  let matched = 0;
  let shown = 0;
  let more = false;
  for await (const r of eachItem(records)) {
    let cells: string | null = null;
    if (sink) {
      cells = rowCells(r, dateColumn);
      sink(r, cells);
    }
    if (needle && !matchText(r.loc).includes(needle)) continue;
    matched++;
    if (matched <= skip) continue;
    if (shown < VIEW_PAGE_ROWS) {
      shown++;
      yield numberedRow(matched, cells ?? rowCells(r, dateColumn));
      continue;
    }
    more = true;
    // Unfiltered, one record past the page is enough to know a next page exists.
    if (!needle && !sink) break;
  }
  return { skip, shown, more, matched };
}

/** Page `page` of a shard: only the records of its key range are read. */
async function* keysetRows(reader: RecordReader, range: ShardRange, starts: readonly number[], page: number): Rows {
  const skip = (page - 1) * VIEW_PAGE_ROWS;
  const pages = starts.length;
  if (page > pages) return { skip, shown: 0, more: false, matched: 0 };
  const own: ShardRange = { ...range, firstKey: starts[page - 1]!, lastKey: page < pages ? starts[page]! - 1 : range.lastKey };
  let shown = 0;
  for await (const r of eachItem(paged(reader.recordPages(own)))) {
    shown++;
    yield numberedRow(skip + shown, rowCells(r, "lastmod"));
    if (shown === MAX_KEYSET_ROWS) break;
  }
  return { skip, shown, more: page < pages, matched: shown };
}

/** Page `page` of a shard as cached: no read. */
async function* cachedPage(digest: ShardDigest, rows: string, page: number): Rows {
  const skip = (page - 1) * VIEW_PAGE_ROWS;
  const shown = Math.min(VIEW_PAGE_ROWS, digest.rows - skip);
  yield rows;
  return { skip, shown, more: page < digest.starts.length, matched: shown };
}

/**
 * A filter from the cache, no record read: every cached loc is matched first, then the pages
 * holding the rows to show are read. null when an entry is gone (nothing has been shown yet).
 */
async function cachedFilter(cache: ViewCache, digest: ShardDigest, { page, q }: ViewQuery): Promise<Rows | null> {
  const locs = await cache.locs(digest);
  if (locs === null) return null;
  const needle = matchNeedle(q);
  const skip = (page - 1) * VIEW_PAGE_ROWS;
  let matched = 0;
  /** Shard positions of the rows to show. */
  const shownRows: number[] = [];
  let row = 0;
  for await (const text of locs) {
    // A needle found nowhere in the entry is in none of its locs.
    if (!text.includes(needle)) {
      for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) row++;
      continue;
    }
    for (let at = 0; at < text.length; row++) {
      const end = text.indexOf("\n", at);
      if (text.slice(at, end).includes(needle)) {
        matched++;
        if (matched > skip && shownRows.length < VIEW_PAGE_ROWS) shownRows.push(row);
      }
      at = end + 1;
    }
  }
  const pageNumbers = [...new Set(shownRows.map((r) => Math.floor(r / VIEW_PAGE_ROWS)))];
  const pages = await cache.pages(pageNumbers);
  if (pages === null) return null;
  return (async function* (): Rows {
    let shown = 0;
    let inPage = -1;
    let text = "";
    let at = 0;
    let current = 0;
    try {
      for (const wanted of shownRows) {
        if (Math.floor(wanted / VIEW_PAGE_ROWS) !== inPage) {
          text = (await pages.next()).value as string;
          inPage = Math.floor(wanted / VIEW_PAGE_ROWS);
          at = 0;
          current = inPage * VIEW_PAGE_ROWS;
        }
        for (; current < wanted; current++) at = text.indexOf("\n", at) + 1;
        shown++;
        yield numberedRow(skip + shown, cellsOf(text.slice(at, text.indexOf("\n", at))));
      }
    } finally {
      await pages.return(undefined);
    }
    return { skip, shown, more: matched > skip + shown, matched };
  })();
}

/** What a shard's view reads from. */
export interface ShardRowsSource {
  reader: RecordReader;
  range: ShardRange;
  /** The manifest's page starts of this version (ShardEntry.pageStarts); null when it has none. */
  pageStarts: readonly number[] | null;
  /**
   * Opens this version's view cache at this location; null: none (rows are read as scanRows reads
   * them). Called only when a page or filter needs it: a keyset page never opens it.
   */
  openCache: () => Promise<ViewCache | null>;
  waitUntil: (promise: Promise<unknown>) => void;
}

/** The rows of a shard's page: from the digest when this location has one for the version, else one pass that makes it. */
export async function* shardRows({ reader, range, pageStarts, openCache, waitUntil }: ShardRowsSource, query: ViewQuery): Rows {
  const records = () => paged(reader.recordPages(range));
  if (!query.q && pageStarts !== null) return yield* keysetRows(reader, range, pageStarts, query.page);
  const cache = await openCache();
  if (cache === null) return yield* scanRows(records(), query, "lastmod");
  if (query.q) {
    const digest = await cache.digest();
    const rows = digest && (await cachedFilter(cache, digest, query));
    if (rows) return yield* rows;
  } else {
    // The page's entry is looked up alongside the digest: it is used only when the digest, written last, says the set is complete.
    const [digest, rows] = await Promise.all([cache.digest(), cache.page(query.page - 1)]);
    if (digest !== null) return yield* rows !== null ? cachedPage(digest, rows, query.page) : keysetRows(reader, range, digest.starts, query.page);
    // Page 1 needs no page starts: the records up to one past the page, as before.
    if (query.page === 1) return yield* scanRows(records(), query, "lastmod");
  }
  const builder = cache.builder(waitUntil);
  let n = 0;
  const outcome = yield* scanRows<StoredRecord>(records(), query, "lastmod", (r, cells) => builder.add(r.key, matchLine(r.loc), rowLine(++n, cells)));
  builder.finish();
  return outcome;
}
