/**
 * The crawler log's shapes, shared by the recorder (src/crawlers/recorder.ts), its store, the
 * range refresh (src/crawlers/ranges.ts) and what status and the dashboard show
 * (src/crawlers/status.ts, src/admin/health.ts). Types only.
 */

/** A crawler's name: the token of `CRAWLER_IP_RANGES` (`googlebot`, `bingbot`), matched in the User-Agent. */
export type CrawlerName = string;

/** How a request claiming a crawler was checked: its IP in the published ranges, Cloudflare's verified-bot flag, or neither. */
export type Verification = "ip" | "cloudflare" | null;

/** One fetch of a sitemap document by a verified crawler, as stored (coalesced: ≤ 1 per crawler, document and minute per location). */
export interface CrawlerFetch {
  origin: string;
  crawler: CrawlerName;
  /** The document fetched, whatever its form (`.xml`, `.xml.gz`): `index`, `<section>-<n>` for a shard, `news-<n>`, `feed`, `text-<section>-<n>`, `robots.txt`: one that was served, or a fixed path's (the index, robots.txt…) that failed. */
  document: string;
  /** The request's path as sent (≤ 200 characters). */
  path: string;
  /** Epoch ms. */
  at: number;
  status: number;
  /** Body bytes sent (as sent: gzip when gzip); null when the transfer did not end (cancelled). */
  bytes: number | null;
  /** `X-Sitemap-Source`: snapshot, cache, live, not-modified, … (robots.txt: origin, last-good, …); null when not said. */
  source: string | null;
}

/** A document fetch as status shows it. */
export interface DocumentFetchStatus {
  /** As in `CrawlerFetch`: `index`, `<section>-<n>`, `robots.txt`, …; `path` is what was requested. */
  document: string;
  path: string;
  at: string;
  status: number;
  bytes: number | null;
  source: string | null;
}

/** What `GET /sitemap-admin/status` answers under `crawlers` (src/crawlers/status.ts). */
export interface CrawlersStatus {
  /** false: no D1 database to keep the log in (nothing recorded). */
  enabled: boolean;
  /** CRAWLER_STALE_DAYS: a listed document no verified crawler fetched in this many days is stale. */
  staleDays: number;
  /**
   * Since when the log can tell (the first status read of the site, or its oldest fetch kept if
   * older); null when disabled. Until `staleDays` have passed since, nothing is called stale.
   */
  since: string | null;
  /** The published ranges each crawler is verified by (CRAWLER_IP_RANGES), as last refreshed. */
  ranges: {
    name: CrawlerName;
    url: string;
    prefixes: number;
    /** Prefixes of its list refused as implausibly wide (shorter than /8 for IPv4, /32 for IPv6), a few at most: they verify nothing. */
    refused: string[];
    fetchedAt: string | null;
    checkedAt: string | null;
    /** The last refresh's failure (the ranges fetched before it stay in use); null when it worked. */
    error: string | null;
  }[];
  crawlers: {
    name: CrawlerName;
    /** Requests in the last 24 h and 7 days (daily counts; today's partial day counts in both): verified, and claimed by the User-Agent alone. */
    requests: { verified24h: number; verified7d: number; unverified24h: number; unverified7d: number };
    /** Its last fetch of the index (`/sitemap.xml` or `/sitemap_index.xml` as configured); null: none in 7 days. */
    index: DocumentFetchStatus | null;
    /** Its last fetch of robots.txt; null: none in 7 days. */
    robots: DocumentFetchStatus | null;
    /** Per section of the manifest: shards fetched in 7 days of those listed, and the last fetch. */
    sections: { section: string; shards: number; fetched: number; last: DocumentFetchStatus | null }[];
    /** Its last answer that was neither 2xx nor 304 per document, in the last 7 days (newest first, ≤ 50). */
    errors: DocumentFetchStatus[];
    /** Its last fetch per document in the last 7 days (newest first, ≤ 200). */
    documents: DocumentFetchStatus[];
  }[];
  /** Listed documents (the index, each shard) no verified crawler fetched in `staleDays`: how many, and the first 50. */
  stale: { count: number; documents: string[] };
}

/** The part of a Workers Analytics Engine dataset the log writes to (bound as CRAWLER_ANALYTICS; docs/crawlers.md). */
export interface AnalyticsSink {
  writeDataPoint(point: { indexes?: string[]; blobs?: string[]; doubles?: number[] }): void;
}
