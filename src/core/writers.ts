/**
 * Element writers: one record in, one string of markup out. Every text value is escaped here and
 * nowhere else, so no caller can forget it.
 */
import { escapeXml, utf8Length } from "./escape.ts";
import { EXT_ALL, EXT_IMAGE, EXT_VIDEO, EXT_XHTML } from "./extensions/kinds.ts";
import type { RecordExtensions } from "./extensions/types.ts";
import { extensionElements, namespaceDeclarations } from "./extensions/writers.ts";
import type { SitemapRef, UrlRecord, UrlRow } from "./types.ts";

const SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9";
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

/** Options that change rendered bytes. Anything here must be part of a document's content version. */
export interface RenderOptions {
  /** Emit `<lastmod>` as `YYYY-MM-DD` only (for engines that reject times). */
  lastmodDateOnly?: boolean;
  /** Link the browser view: an `<?xml-stylesheet?>` PI pointing at STYLESHEET_HREF. */
  stylesheet?: boolean;
  /**
   * Extension kinds (EXT_* bits) declared on `<urlset>`: the shard's manifest entry knows them.
   * Not part of the content version: they follow from the records. Default none (each extension
   * element then declares its own namespace).
   */
  namespaces?: number;
  /** Extension kinds written into `<url>`s. Default SHARD_EXTENSIONS (news goes to the news sitemap). */
  extensions?: number;
}

/** Extensions written in section shards: news has its own sitemap (recent articles only). */
export const SHARD_EXTENSIONS = EXT_IMAGE | EXT_VIDEO | EXT_XHTML;

/** Where the browser view's XSL lives (served by the Worker, same origin as the sitemaps). */
export const STYLESHEET_HREF = "/sitemap.xsl";
const STYLESHEET_PI = `<?xml-stylesheet type="text/xsl" href="${STYLESHEET_HREF}"?>\n`;

/** Bumped whenever the markup we write changes, so stored versions (ETags, snapshots) roll over. */
const RENDER_FORMAT_VERSION = "2";

export function renderFingerprint(options: RenderOptions = {}): string {
  return `${RENDER_FORMAT_VERSION}${options.lastmodDateOnly ? "d" : "t"}${options.stylesheet ? "x" : ""}`;
}

/** `<urlset>` head declaring the namespaces of the extension kinds in `namespaces`. */
export function urlsetOpen(namespaces = 0, stylesheet = false): string {
  return `${XML_DECLARATION}${stylesheet ? STYLESHEET_PI : ""}<urlset xmlns="${SITEMAP_NS}"${namespaceDeclarations(namespaces)}>\n`;
}
export const URLSET_CLOSE = "</urlset>\n";

export function sitemapIndexOpen(stylesheet = false): string {
  return `${XML_DECLARATION}${stylesheet ? STYLESHEET_PI : ""}<sitemapindex xmlns="${SITEMAP_NS}">\n`;
}
export const SITEMAPINDEX_CLOSE = "</sitemapindex>\n";

/** Normalised lastmods are `YYYY-MM-DD` or a full datetime: the first 10 characters are the date. */
function lastmodText(lastmod: string, options: RenderOptions): string {
  return options.lastmodDateOnly ? lastmod.slice(0, 10) : lastmod;
}

/** Digits kept by formatPriority: enough for any sane priority, few enough to hide float noise. */
const PRIORITY_SCALE = 10_000;
/** formatPriority results by rounded step (0…PRIORITY_SCALE), filled on first use. */
const PRIORITY_TEXT: (string | undefined)[] = new Array<string | undefined>(PRIORITY_SCALE + 1).fill(undefined);

/**
 * `<priority>` text: at least one decimal, no exponent, at most 4 decimals
 * (0.5 → "0.5", 1 → "1.0", 0 → "0.0", 0.30000000000000004 → "0.3").
 * Throws RangeError outside 0.0–1.0: callers pass validated records only.
 */
export function formatPriority(p: number): string {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`priority must be between 0.0 and 1.0, got ${p}`);
  // The text depends only on the rounded step: format each of the 10,001 steps once.
  const step = Math.round(p * PRIORITY_SCALE);
  let text = PRIORITY_TEXT[step];
  if (text === undefined) {
    // Below 1e-6 toString() would use an exponent, but rounding to 1e-4 steps never leaves such values.
    const s = String(step / PRIORITY_SCALE);
    text = PRIORITY_TEXT[step] = s.includes(".") ? s : `${s}.0`;
  }
  return text;
}

/** One `<url>` element, children in XSD order: loc, lastmod, changefreq, priority, extensions. */
export function urlElement(record: UrlRecord, options: RenderOptions = {}): string {
  return urlMarkup(record.loc, record.lastmod, record.changefreq, record.priority, options) + urlTail(record.ext, options);
}

/** The same `<url>` element from a store's row array (extension JSON parsed only where present). */
export function urlRowElement(row: UrlRow, options: RenderOptions = {}): string {
  const ext = row[5];
  return urlMarkup(row[1], row[2], row[3], row[4], options) + urlTail(ext === null ? null : (JSON.parse(ext) as RecordExtensions), options);
}

/** `<url>` up to its extensions: one writer for records and rows, so both give the same bytes. */
function urlMarkup(
  loc: string,
  lastmod: string | null | undefined,
  changefreq: string | null | undefined,
  priority: number | null | undefined,
  options: RenderOptions,
): string {
  let xml = `<url><loc>${escapeXml(loc)}</loc>`;
  if (lastmod) xml += `<lastmod>${escapeXml(lastmodText(lastmod, options))}</lastmod>`;
  if (changefreq) xml += `<changefreq>${escapeXml(changefreq)}</changefreq>`;
  if (priority !== null && priority !== undefined) xml += `<priority>${formatPriority(priority)}</priority>`;
  return xml;
}

function urlTail(ext: RecordExtensions | null | undefined, options: RenderOptions): string {
  return ext ? `${extensionElements(ext, options.extensions ?? SHARD_EXTENSIONS, options.namespaces ?? 0)}</url>\n` : "</url>\n";
}

/** One `<sitemap>` element of an index. */
export function sitemapElement(ref: SitemapRef): string {
  let xml = `<sitemap><loc>${escapeXml(ref.loc)}</loc>`;
  if (ref.lastmod) xml += `<lastmod>${escapeXml(ref.lastmod)}</lastmod>`;
  return `${xml}</sitemap>\n`;
}

/**
 * Bytes one record adds to a urlset. Stored with the record at write time (rendered with full
 * datetimes, the longest form) so the manifest can enforce the byte limit without reading records.
 * Includes the shard's extension markup, namespaces declared on `<urlset>` (urlsetOverheadBytes
 * counts those declarations).
 */
export function urlElementBytes(record: UrlRecord): number {
  return utf8Length(urlElement(record, { namespaces: EXT_ALL }));
}

/**
 * Bytes of a urlset's head and tail, without any `<url>`. The manifest plans with the longest head
 * (`EXT_ALL`, `true`: every namespace declared, the stylesheet PI) so its byte counts stay upper bounds.
 */
export function urlsetOverheadBytes(namespaces = 0, stylesheet = false): number {
  return utf8Length(urlsetOpen(namespaces, stylesheet)) + utf8Length(URLSET_CLOSE);
}
