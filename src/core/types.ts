/** Types of the protocol core. Nothing here knows about Cloudflare. */
import type { RecordExtensions } from "./extensions/types.ts";

export const CHANGEFREQS = ["always", "hourly", "daily", "weekly", "monthly", "yearly", "never"] as const;
export type Changefreq = (typeof CHANGEFREQS)[number];

/** A validated, normalised URL record: what the renderer writes as one `<url>`. */
export interface UrlRecord {
  /** Absolute, RFC 3986-normalised URL (not yet entity-escaped). */
  loc: string;
  /** Normalised W3C datetime: `YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ss[.fff](Z|±hh:mm)`. */
  lastmod?: string | null;
  changefreq?: Changefreq | null;
  /** 0.0–1.0 */
  priority?: number | null;
  /** Protocol extensions (images, videos, news, hreflang alternates), validated and normalised. */
  ext?: RecordExtensions | null;
}

/** A record as stored by a source: the record plus its stable key and change stamp. */
export interface StoredRecord extends UrlRecord {
  /** Stable integer key: never changes for a given `loc`, new records get larger keys. */
  key: number;
  section: string;
  /** Change stamp (ms since epoch) of the last real change, including deletion. */
  updatedAt: number;
  /** Tombstone: deleted records are kept until regeneration consumed them. */
  deleted?: boolean;
}

/**
 * A record as a store reads it for rendering, one array per row and only the columns `<url>` needs
 * (key, loc, lastmod, changefreq, priority, extension JSON as stored): D1's `.raw()` rows. The
 * renderer writes straight from it, so a shard's 50,000 rows never become objects.
 */
export type UrlRow = readonly [
  key: number,
  loc: string,
  lastmod: string | null,
  changefreq: Changefreq | null,
  priority: number | null,
  ext: string | null,
];

/** One `<sitemap>` entry of a sitemap index. */
export interface SitemapRef {
  loc: string;
  lastmod?: string | null;
}
