/**
 * The crawler log's writer, one per isolate (docs/crawlers.md "Cost"). It runs after the answer
 * (the HTTP layer hands it to `waitUntil`), and keeps D1 writes bounded whatever the load:
 *
 *  - a verified crawler's fetch is written at most once per site, crawler, document, minute and
 *    outcome (ok / failed) by this isolate, and, where the location can say so (`claim`, the
 *    Cache API), by this location: a crawler reading the index 1,000 times a minute is one row;
 *  - requests claiming a crawler, verified or not, are only counted in memory and added to D1 in one
 *    statement at most once a minute per isolate (at once for a counter this isolate never wrote:
 *    its row then exists before any burst). A spoofed Googlebot flood writes no row per request.
 *
 * Counts held in memory when an isolate is evicted are lost: the counts are a load indicator, the
 * fetch rows are the record.
 */
import { type CrawlerLogStore, type RequestCount, isOk } from "./log-store.ts";
import type { CrawlerName, Verification } from "./types.ts";

/** A response to a request that claimed a crawler, as the HTTP layer saw it. */
export interface ObservedFetch {
  origin: string;
  crawler: CrawlerName;
  verification: Verification;
  document: string;
  path: string;
  /** Epoch ms. */
  at: number;
  status: number;
  bytes: number | null;
  source: string | null;
}

/** Claims a key for a minute in this location (the Cache API); false when another isolate of the location already did. */
export type LocationClaim = (key: string) => Promise<boolean>;

/** Counts are added to D1 at most this often per isolate. */
export const COUNT_FLUSH_MS = 60_000;
/** Keys of fetches written this minute kept in memory at most (a site's documents × crawlers fits many times over). */
const WRITTEN_KEPT = 10_000;

/** A counter's key: per site, crawler and verification. */
const counterKey = (c: Pick<RequestCount, "origin" | "crawler" | "verified">): string => `${c.origin} ${c.crawler} ${c.verified ? 1 : 0}`;

export class CrawlerRecorder {
  /** Fetch key → the minute it was last written by this isolate. */
  readonly #written = new Map<string, number>();
  /** Counts not yet added to D1. */
  #pending = new Map<string, RequestCount>();
  /** Counters this isolate has added to D1 at least once. */
  readonly #known = new Set<string>();
  #lastFlush = 0;

  /** Records one response: counts it, and writes a verified fetch when it is the first of its minute. */
  async observe(log: CrawlerLogStore, f: ObservedFetch, claim: LocationClaim | null): Promise<void> {
    const verified = f.verification !== null;
    const counter = counterKey({ origin: f.origin, crawler: f.crawler, verified });
    const pending = this.#pending.get(counter);
    if (pending) pending.requests++;
    else this.#pending.set(counter, { origin: f.origin, crawler: f.crawler, verified, requests: 1 });
    const work: Promise<void>[] = [];
    if (!this.#known.has(counter) || f.at - this.#lastFlush >= COUNT_FLUSH_MS) work.push(this.#flush(log, f.at));
    if (verified) work.push(this.#writeFetch(log, f, claim));
    await Promise.all(work);
  }

  async #writeFetch(log: CrawlerLogStore, f: ObservedFetch, claim: LocationClaim | null): Promise<void> {
    const minute = Math.floor(f.at / 60_000);
    const key = `${f.origin} ${f.crawler} ${isOk(f.status) ? "ok" : "failed"} ${f.document}`;
    if (this.#written.get(key) === minute) return;
    if (this.#written.size >= WRITTEN_KEPT) {
      for (const [k, m] of this.#written) if (m !== minute) this.#written.delete(k);
      if (this.#written.size >= WRITTEN_KEPT) this.#written.clear();
    }
    this.#written.set(key, minute);
    if (claim && !(await claim(`${minute} ${key}`))) return;
    const { verification: _, ...fetch } = f;
    await log.recordFetches([fetch]);
  }

  async #flush(log: CrawlerLogStore, now: number): Promise<void> {
    const counts = [...this.#pending.values()];
    this.#pending = new Map();
    this.#lastFlush = now;
    if (counts.length === 0) return;
    for (const c of counts) this.#known.add(counterKey(c));
    try {
      await log.addCounts(counts, now);
    } catch (error) {
      // Put back, to go with the next flush: the keys are few (sites × crawlers × 2), so this stays small.
      for (const c of counts) {
        const key = counterKey(c);
        this.#known.delete(key);
        const p = this.#pending.get(key);
        if (p) p.requests += c.requests;
        else this.#pending.set(key, c);
      }
      throw error;
    }
  }
}
