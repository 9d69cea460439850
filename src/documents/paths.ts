/**
 * The URL space of the Worker: the paths of its documents, built from their parts. Everything lives
 * under `/sitemap` (the zone route is `/sitemap*`); src/http/document-path.ts parses them back.
 */
import { STYLESHEET_HREF } from "../core/writers.ts";

/** `.xml` negotiates gzip/identity; `.xml.gz` is a gzip file. */
export type ShardFile = "xml" | "xml.gz";

export const INDEX_PATH = "/sitemap.xml";
export const FEED_PATH = "/sitemap-feed.atom";
/** The browser view's stylesheet, linked by the `<?xml-stylesheet?>` PI the writers emit. */
export const XSL_PATH = STYLESHEET_HREF;

export function shardPath(section: string, n: number, file: ShardFile): string {
  return `/sitemap-${section}-${n}.${file}`;
}

/**
 * News sitemaps are `/sitemap-news.xml`, `/sitemap-news2.xml`, `/sitemap-news3.xml`, …: never of the
 * shard form `-{n}.xml`, so they cannot collide with a section that happens to be called "news".
 */
export function newsPath(n: number, file: ShardFile): string {
  return `/sitemap-news${n === 1 ? "" : n}.${file}`;
}

export function textPath(section: string, n: number): string {
  return `/sitemap-${section}-${n}.txt`;
}
