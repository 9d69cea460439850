/**
 * The news sitemap: articles (records with `news` data) published in the last 2 days, newest
 * first, ≤ 1,000 per file: `/sitemap-news.xml`, then `/sitemap-news2.xml`, … . It is computed at
 * request time (the window moves with the clock), listed in the index only while non-empty, and an
 * empty one is 404, never an empty urlset.
 */
import { MAX_NEWS_PER_SITEMAP, NEWS_MAX_AGE_MS } from "../core/extensions/limits.ts";
import { Fingerprint } from "../core/fingerprint.ts";
import type { StoredRecord } from "../core/types.ts";
import type { NewsStats } from "../store/port.ts";

export interface NewsWindow {
  /** Oldest publication time included (ms). */
  since: number;
  /** Newest publication time included (ms): articles dated in the future wait until then. */
  until: number;
}

export function newsWindow(now: number): NewsWindow {
  return { since: now - NEWS_MAX_AGE_MS, until: now };
}

export interface NewsSummary {
  /** Articles in the window. */
  count: number;
  /** News sitemap files (0 when there is no article: then none is listed or served). */
  files: number;
  /**
   * When the news set last changed (ms): an article written or deleted, published (its date
   * reached), or aged out of the window (its date plus 2 days).
   */
  lastChange: number;
  /** Content version of the set: changes with any of the above. */
  version: string;
}

export function summarizeNews(stats: NewsStats): NewsSummary {
  const expiredAt = stats.lastExpiredPublication > 0 ? stats.lastExpiredPublication + NEWS_MAX_AGE_MS : 0;
  return {
    count: stats.count,
    files: Math.ceil(stats.count / MAX_NEWS_PER_SITEMAP),
    lastChange: Math.max(stats.lastUpdated, stats.newestPublication, expiredAt),
    version: new Fingerprint()
      .addString("news")
      .addNumber(stats.count)
      .addNumber(stats.lastUpdated)
      .addNumber(stats.newestPublication)
      .addNumber(stats.lastExpiredPublication)
      .digest(),
  };
}

/** Content version of one news file: its records and how they are rendered. */
export function newsFileVersion(records: readonly StoredRecord[], n: number, renderFingerprint: string): string {
  const fp = new Fingerprint().addString("news").addString(renderFingerprint).addNumber(n);
  for (const r of records) fp.addNumber(r.key).addNumber(r.updatedAt);
  return fp.digest();
}
