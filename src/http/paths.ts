/** The URL space of the Worker. Everything lives under `/sitemap` (the zone route is `/sitemap*`). */
import { SECTION_PATTERN } from "../core/limits.ts";
import { STYLESHEET_HREF } from "../core/writers.ts";

export type ShardFile = "xml" | "xml.gz";

export type SitemapPath =
  | { kind: "index" }
  | { kind: "shard"; section: string; n: number; file: ShardFile };

const SHARD_PATH = /^\/sitemap-([a-z0-9_-]+)-([1-9][0-9]{0,8})\.(xml|xml\.gz)$/;

export const INDEX_PATH = "/sitemap.xml";

/** Parses a request path; null for anything that is not a sitemap document of ours. */
export function parseSitemapPath(pathname: string): SitemapPath | null {
  if (pathname === INDEX_PATH) return { kind: "index" };
  const match = SHARD_PATH.exec(pathname);
  if (!match) return null;
  const section = match[1]!;
  if (!SECTION_PATTERN.test(section)) return null;
  return { kind: "shard", section, n: Number(match[2]), file: match[3] as ShardFile };
}

export function shardPath(section: string, n: number, file: ShardFile): string {
  return `/sitemap-${section}-${n}.${file}`;
}

/** Other formats (src/formats): news sitemaps, text sitemaps, the Atom feed, the browser view's XSL. */
export type FormatPath =
  | { kind: "news"; n: number; file: ShardFile }
  | { kind: "text"; section: string; n: number }
  | { kind: "feed" }
  | { kind: "xsl" };

/**
 * News sitemaps are `/sitemap-news.xml`, `/sitemap-news2.xml`, `/sitemap-news3.xml`, …: never of the
 * shard form `-{n}.xml`, so they cannot collide with a section that happens to be called "news".
 */
const NEWS_PATH = /^\/sitemap-news([2-9]|[1-9][0-9]{1,5})?\.(xml|xml\.gz)$/;
const TEXT_PATH = /^\/sitemap-([a-z0-9_-]+)-([1-9][0-9]{0,8})\.txt$/;
export const FEED_PATH = "/sitemap-feed.atom";
/** The browser view's stylesheet, linked by the `<?xml-stylesheet?>` PI the writers emit. */
export const XSL_PATH = STYLESHEET_HREF;

/** Parses a request path of one of the other formats; null for anything else. */
export function parseFormatPath(pathname: string): FormatPath | null {
  if (pathname === FEED_PATH) return { kind: "feed" };
  if (pathname === XSL_PATH) return { kind: "xsl" };
  const news = NEWS_PATH.exec(pathname);
  if (news) return { kind: "news", n: news[1] ? Number(news[1]) : 1, file: news[2] as ShardFile };
  const text = TEXT_PATH.exec(pathname);
  if (text && SECTION_PATTERN.test(text[1]!)) return { kind: "text", section: text[1]!, n: Number(text[2]) };
  return null;
}

export function newsPath(n: number, file: ShardFile): string {
  return `/sitemap-news${n === 1 ? "" : n}.${file}`;
}

export function textPath(section: string, n: number): string {
  return `/sitemap-${section}-${n}.txt`;
}
