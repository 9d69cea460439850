/**
 * What the other formats need from a record source beyond UrlSource. D1UrlSource implements both;
 * a source without them (e.g. KV) simply has no news sitemap and no feed (404).
 */
import type { StoredRecord } from "../core/types.ts";
import type { UrlSource } from "../sources/source.ts";

/** A site's articles in the news window. */
export interface NewsStats {
  /** Live articles published in the window. */
  count: number;
  /** Newest change stamp (ms) of an article in the window, tombstones included; 0 when none. */
  lastUpdated: number;
  /** Publication time (ms) of the newest live article in the window; 0 when none. */
  newestPublication: number;
  /** Publication time (ms) of the newest live article that already left the window; 0 when none. */
  lastExpiredPublication: number;
}

export interface NewsSource {
  /** Stats of [sinceMs, untilMs] by news.publication_date. */
  newsStats(origin: string, sinceMs: number, untilMs: number): Promise<NewsStats>;
  /** Articles of [sinceMs, untilMs], newest first, `limit` from `offset`. */
  newsRecords(origin: string, sinceMs: number, untilMs: number, offset: number, limit: number): Promise<StoredRecord[]>;
}

export interface RecentSource {
  /** The `limit` most recently changed live records, newest change first. */
  recentRecords(origin: string, limit: number): Promise<StoredRecord[]>;
}

export function isNewsSource(source: UrlSource): source is UrlSource & NewsSource {
  const s = source as Partial<NewsSource>;
  return typeof s.newsStats === "function" && typeof s.newsRecords === "function";
}

export function isRecentSource(source: UrlSource): source is UrlSource & RecentSource {
  return typeof (source as Partial<RecentSource>).recentRecords === "function";
}
