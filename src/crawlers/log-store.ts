/**
 * Where the crawler log is kept (D1: src/adapters/d1/crawler-log.ts, migrations/0021_crawler_log.sql):
 * verified crawlers' fetches, at most one row per crawler, document, minute and outcome, and
 * request counts per crawler in a fixed ring of hourly and daily slots. Each method is one query.
 */
import type { CrawlerFetch, CrawlerName } from "./types.ts";

/** Requests counted since the last flush, per site, crawler and verification. */
export interface RequestCount {
  origin: string;
  crawler: CrawlerName;
  verified: boolean;
  requests: number;
}

/** A count slot as stored: `h<hour of day>` or `d<day mod 8>`, the period it holds (hours or days since the epoch). */
export interface CountSlot {
  crawler: CrawlerName;
  verified: boolean;
  slot: string;
  period: number;
  requests: number;
}

/** A verified crawler's last fetch of a document (the newest row of the document). */
export type StoredFetch = Omit<CrawlerFetch, "origin">;

export interface CrawlerLogStore {
  /** Inserts fetches; one already stored for its crawler, document, minute and outcome is kept. */
  recordFetches(fetches: readonly CrawlerFetch[]): Promise<void>;
  /** Adds the counts to their hour's and day's slots at `now`, restarting a slot whose period has passed. */
  addCounts(counts: readonly RequestCount[], now: number): Promise<void>;
  /** Every count slot of the site (≤ 32 per crawler and verification). */
  counts(origin: string): Promise<CountSlot[]>;
  /** Per crawler and document, the newest fetch at or after `since`, newest first, at most `limit`. */
  lastFetches(origin: string, since: number, limit: number): Promise<StoredFetch[]>;
  /** The newest fetches at or after `since` that were neither 2xx nor 304, newest first, at most `limit`. */
  failedFetches(origin: string, since: number, limit: number): Promise<StoredFetch[]>;
  /** When the log began for the site: the earliest of the first time it was asked (`now` then) and the oldest fetch kept. */
  startedAt(origin: string, now: number): Promise<number>;
  /** Deletes up to `limit` fetches older than `before` (ms), of every site of the database, oldest first; how many. */
  trim(before: number, limit: number): Promise<number>;
}

/** A fetch that counts as served: 2xx, or 304 (the crawler's copy is current); anything else is a failed one. */
export const isOk = (status: number): boolean => (status >= 200 && status < 300) || status === 304;

/** A count's slots at `now`: its hour of the day's, and its day's (mod 8, so that 7 full days and today fit). */
export function slotsAt(now: number): { hour: { slot: string; period: number }; day: { slot: string; period: number } } {
  const hour = Math.floor(now / 3600_000);
  const day = Math.floor(now / 86400_000);
  return { hour: { slot: `h${hour % 24}`, period: hour }, day: { slot: `d${day % 8}`, period: day } };
}
