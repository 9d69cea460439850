/**
 * Element writers: one record in, one string of markup out. Every text value is escaped here and
 * nowhere else, so no caller can forget it.
 */
import { escapeXml, utf8Length } from "./escape.ts";
import type { SitemapRef, UrlRecord } from "./types.ts";

export const SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9";
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** Options that change rendered bytes. Anything here must be part of a document's content version. */
export interface RenderOptions {
  /** Emit `<lastmod>` as `YYYY-MM-DD` only (for engines that reject times). */
  lastmodDateOnly?: boolean;
}

/** Bumped whenever the markup we write changes, so stored versions (ETags, snapshots) roll over. */
export const RENDER_FORMAT_VERSION = "1";

export function renderFingerprint(options: RenderOptions = {}): string {
  return `${RENDER_FORMAT_VERSION}${options.lastmodDateOnly ? "d" : "t"}`;
}

export function urlsetOpen(): string {
  return `${XML_DECLARATION}<urlset xmlns="${SITEMAP_NS}">\n`;
}
export const URLSET_CLOSE = "</urlset>\n";

export function sitemapIndexOpen(): string {
  return `${XML_DECLARATION}<sitemapindex xmlns="${SITEMAP_NS}">\n`;
}
export const SITEMAPINDEX_CLOSE = "</sitemapindex>\n";

/** Normalised lastmods are `YYYY-MM-DD` or a full datetime: the first 10 characters are the date. */
function lastmodText(lastmod: string, options: RenderOptions): string {
  return options.lastmodDateOnly ? lastmod.slice(0, 10) : lastmod;
}

/** Digits kept by formatPriority: enough for any sane priority, few enough to hide float noise. */
const PRIORITY_SCALE = 10_000;

/**
 * `<priority>` text: at least one decimal, no exponent, at most 4 decimals
 * (0.5 → "0.5", 1 → "1.0", 0 → "0.0", 0.30000000000000004 → "0.3").
 * Throws RangeError outside 0.0–1.0: callers pass validated records only.
 */
export function formatPriority(p: number): string {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`priority must be between 0.0 and 1.0, got ${p}`);
  // Below 1e-6 toString() would use an exponent, but rounding to 1e-4 steps never leaves such values.
  const s = String(Math.round(p * PRIORITY_SCALE) / PRIORITY_SCALE);
  return s.includes(".") ? s : `${s}.0`;
}

/** One `<url>` element, children in XSD order: loc, lastmod, changefreq, priority. */
export function urlElement(record: UrlRecord, options: RenderOptions = {}): string {
  let xml = `<url><loc>${escapeXml(record.loc)}</loc>`;
  if (record.lastmod) xml += `<lastmod>${escapeXml(lastmodText(record.lastmod, options))}</lastmod>`;
  if (record.changefreq) xml += `<changefreq>${record.changefreq}</changefreq>`;
  if (record.priority !== null && record.priority !== undefined) {
    xml += `<priority>${formatPriority(record.priority)}</priority>`;
  }
  return xml + "</url>\n";
}

/** One `<sitemap>` element of an index. */
export function sitemapElement(ref: SitemapRef): string {
  let xml = `<sitemap><loc>${escapeXml(ref.loc)}</loc>`;
  if (ref.lastmod) xml += `<lastmod>${escapeXml(ref.lastmod)}</lastmod>`;
  return xml + "</sitemap>\n";
}

/**
 * Bytes one record adds to a urlset. Stored with the record at write time (rendered with full
 * datetimes, the longest form) so the manifest can enforce the byte limit without reading records.
 */
export function urlElementBytes(record: UrlRecord): number {
  return utf8Length(urlElement(record));
}

/** Bytes of a urlset's head and tail, without any `<url>`. */
export function urlsetOverheadBytes(): number {
  return utf8Length(urlsetOpen()) + utf8Length(URLSET_CLOSE);
}
