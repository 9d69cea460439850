/** The URL space of the Worker. Everything lives under `/sitemap` (the zone route is `/sitemap*`). */
import { SECTION_PATTERN } from "../core/limits.ts";

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
