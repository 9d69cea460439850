/** Limits of the sitemaps.org 0.9 protocol (and a few of our own). */

/** Max `<url>` entries per urlset and `<sitemap>` entries per index. */
export const MAX_URLS_PER_SITEMAP = 50_000;
/** Max uncompressed bytes per sitemap file (sitemaps.org, since Nov 2016). */
export const MAX_SITEMAP_BYTES = 52_428_800;
/** `<loc>` must be shorter than 2,048 characters (spec: "less than 2,048"). */
export const MAX_LOC_LENGTH = 2_047;
/** XSD minLength of `<loc>`. */
export const MIN_LOC_LENGTH = 12;
/** Section names appear in URLs: keep them short and URL-safe. */
export const SECTION_PATTERN = /^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$/;
export const DEFAULT_SECTION = "pages";
/**
 * Rows per page of a shard's browser view. The manifest keeps the stable key that starts each page
 * (ShardEntry.pageStarts), so a page is read by its own key range, never by skipping rows.
 */
export const VIEW_PAGE_ROWS = 1_000;
/** Target size of one emitted chunk: big enough to amortise stream overhead, small enough to stay flat. */
export const RENDER_CHUNK_BYTES = 32 * 1024;

/**
 * A move's page of rows read whole (its copy, its catch-up) at most, in UTF-16 units of loc and
 * `ext` plus ~200 a row: ~16 MB of strings in a 128 MB isolate, whatever its row count (5,000
 * records of ~1 MB `ext` would be 5 GB); a page is one row at least.
 */
export const COPY_PAGE_CHARS = 8_000_000;
