/**
 * Protocol extensions of a URL record: Google's image, video and news sitemap extensions and
 * hreflang alternates (`xhtml:link`). Stored as JSON next to the record (column `ext`), in the
 * normalised form the validators return, so writers never re-check them.
 *
 * Field names are the XML element names (snake_case), so a record reads like the markup it becomes.
 */

export interface ImageEntry {
  /** Absolute URL of the image (may be on another host, e.g. a CDN). */
  loc: string;
  /** Deprecated by Google (no effect since 2022) but valid in the XSD. */
  caption?: string;
  geo_location?: string;
  title?: string;
  license?: string;
}

type Relationship = "allow" | "deny";
type VideoPlatform = "web" | "mobile" | "tv";

export interface VideoEntry {
  thumbnail_loc: string;
  /** ≤ 100 characters. */
  title: string;
  /** ≤ 2,048 characters. */
  description: string;
  /** At least one of content_loc and player_loc. */
  content_loc?: string;
  player_loc?: string;
  /** Seconds, 1–28,800. */
  duration?: number;
  /** W3C date or datetime (normalised). */
  expiration_date?: string;
  /** 0.0–5.0, two decimals at most. */
  rating?: number;
  view_count?: number;
  publication_date?: string;
  /** ≤ 32 tags. */
  tags?: string[];
  family_friendly?: boolean;
  /** ISO 3166 alpha-2 country codes (uppercase). */
  restriction?: { relationship: Relationship; countries: string[] };
  requires_subscription?: boolean;
  uploader?: { name: string; info?: string };
  platform?: { relationship: Relationship; platforms: VideoPlatform[] };
  live?: boolean;
}

export interface NewsEntry {
  publication: {
    name: string;
    /** ISO 639 code (2 or 3 lowercase letters), or zh-cn / zh-tw. */
    language: string;
  };
  /** Normalised W3C datetime with seconds and zone: `YYYY-MM-DDThh:mm:ss(Z|±hh:mm)`. */
  publication_date: string;
  title: string;
}

export interface AlternateLink {
  /** BCP 47 language(-region) tag, or `x-default`. */
  hreflang: string;
  /** Absolute, normalised URL of the variant. */
  href: string;
}

export interface RecordExtensions {
  images?: ImageEntry[];
  videos?: VideoEntry[];
  news?: NewsEntry;
  alternates?: AlternateLink[];
}

/**
 * Extension kinds as bits. The same numbers are computed in SQL by migrations/0004 (column
 * `urls.ext_kinds`), so a shard's manifest entry knows which namespaces its head must declare.
 */
export const EXT_IMAGE = 1;
export const EXT_VIDEO = 2;
export const EXT_NEWS = 4;
export const EXT_XHTML = 8;
export const EXT_ALL = EXT_IMAGE | EXT_VIDEO | EXT_NEWS | EXT_XHTML;

export interface Namespace {
  bit: number;
  prefix: string;
  uri: string;
}

/** In the order the writers emit elements: image, video, news, xhtml. */
export const NAMESPACES: readonly Namespace[] = [
  { bit: EXT_IMAGE, prefix: "image", uri: "http://www.google.com/schemas/sitemap-image/1.1" },
  { bit: EXT_VIDEO, prefix: "video", uri: "http://www.google.com/schemas/sitemap-video/1.1" },
  { bit: EXT_NEWS, prefix: "news", uri: "http://www.google.com/schemas/sitemap-news/0.9" },
  { bit: EXT_XHTML, prefix: "xhtml", uri: "http://www.w3.org/1999/xhtml" },
];

/** Which extension kinds a record carries (the bits of the non-empty fields). */
export function extKindsOf(ext: RecordExtensions | null | undefined): number {
  if (!ext) return 0;
  let kinds = 0;
  if (ext.images && ext.images.length > 0) kinds |= EXT_IMAGE;
  if (ext.videos && ext.videos.length > 0) kinds |= EXT_VIDEO;
  if (ext.news) kinds |= EXT_NEWS;
  if (ext.alternates && ext.alternates.length > 0) kinds |= EXT_XHTML;
  return kinds;
}

/** Limits of the extensions (Google's, or ours where Google sets none; see docs/extensions.md). */
export const MAX_IMAGES_PER_URL = 1_000;
export const MAX_VIDEOS_PER_URL = 100;
export const MAX_ALTERNATES_PER_URL = 1_000;
export const MAX_VIDEO_TAGS = 32;
export const MAX_VIDEO_TITLE = 100;
export const MAX_VIDEO_DESCRIPTION = 2_048;
export const MAX_VIDEO_DURATION = 28_800;
export const MAX_UPLOADER_NAME = 255;
/** Our cap for other free-text values (captions, tags, news titles, publication names). */
export const MAX_TEXT = 2_048;
/** News sitemaps: ≤ 1,000 `<news:news>` per file, only articles from the last 2 days. */
export const MAX_NEWS_PER_SITEMAP = 1_000;
export const NEWS_MAX_AGE_MS = 2 * 24 * 60 * 60 * 1000;
