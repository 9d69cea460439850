/**
 * The crawler log's writer, one per isolate (docs/crawlers.md "Cost"). It runs after the answer
 * (the HTTP layer hands it to `waitUntil`), and keeps D1 writes bounded whatever the load:
 *
 *  - a verified crawler's fetch is written at most once per site, crawler, document, minute and
 *    outcome (ok / failed) by this isolate, and, where the location can say so (`claim`, the
 *    Cache API), by this location: a crawler reading the index 1,000 times a minute is one row;
 *  - an answer that names no document (src/http/crawlers/document-name.ts `loggedDocument`: a 404 for
 *    a made-up `/sitemap-pages-99999.xml`) is counted, never written as a row;
 *  - requests claiming a crawler, verified or not, are only counted in memory, per D1 database (each
 *    database's counts through its own log: never one site's counts into another's database), and
 *    added to D1 in one statement per database: at once the first time this isolate counts for that
 *    database; then by a timer the counting request holds (`FlushTimer`: its `waitUntil`, at most
 *    CRAWLER_COUNT_FLUSH_SECONDS, one timer per isolate at a time), so counts reach D1 within that
 *    many seconds of the first one pending even if no request follows; and, as a fallback (no timer,
 *    or one that never fired), once the oldest pending count is a minute old, by the next request this
 *    isolate observes (to any site). A spoofed Googlebot flood over any number of tenants writes no
 *    row per request, and at most one statement per database and timer.
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
  /** The document the answer served (or a fixed path's, failed); null: none (only counted, so made-up paths cannot grow the log). */
  document: string | null;
  path: string;
  /** Epoch ms. */
  at: number;
  status: number;
  bytes: number | null;
  source: string | null;
}

/** Whether `origin` is still a site (configured or live in the registry): counts of a deleted site are dropped at their flush. */
export type SiteLive = (origin: string) => Promise<boolean>;

/** Claims a key for a minute in this location (the Cache API); false when another isolate of the location already did. */
export type LocationClaim = (key: string) => Promise<boolean>;

/** Without a timer (or when it never fired), counts wait in memory at most this long, then go with the next request this isolate observes (to any site). */
export const COUNT_FLUSH_MS = 60_000;
/** A timer not fired this long after it was due is taken for lost (its invocation ended first: Cloudflare lets `waitUntil` run 30 s after the response). */
const TIMER_LOST_MS = 30_000;

/**
 * A flush later, kept alive by the invocation that counted (the HTTP layer: a wait of `delayMs` in
 * its `waitUntil`, under its meter). `start` runs `flush` once, `delayMs` on; the recorder starts
 * one at a time per isolate.
 */
export interface FlushTimer {
  delayMs: number;
  start(flush: () => Promise<void>): void;
}

/** Keys of fetches written this minute kept in memory at most (a site's documents × crawlers fits many times over). */
const WRITTEN_KEPT = 10_000;

/** A counter's key: per site, crawler and verification. */
const counterKey = (c: Pick<RequestCount, "origin" | "crawler" | "verified">): string => `${c.origin} ${c.crawler} ${c.verified ? 1 : 0}`;

/** One log's counts not yet added to D1, and when the oldest of them was counted. */
interface Pending {
  counts: Map<string, RequestCount>;
  since: number;
}

export class CrawlerRecorder {
  /** Fetch key → the minute it was last written by this isolate. */
  readonly #written = new Map<string, number>();
  /** Per log (one per D1 database, src/services.ts): its sites' counts, flushed through it alone. */
  readonly #pending = new Map<CrawlerLogStore, Pending>();
  /** Logs this isolate has flushed to at least once (a few: one per D1 database). */
  readonly #flushed = new Set<CrawlerLogStore>();
  /** The timer started and not yet fired: when it was started and is due (the observed fetches' clock); null: none. */
  #timer: { startedAt: number; due: number } | null = null;

  /**
   * Records one response: counts it, flushes the counts that are due, writes a verified fetch of a
   * document when it is the first of its minute, and starts `timer` (when given and none is running)
   * if counts are left pending.
   */
  async observe(
    log: CrawlerLogStore,
    f: ObservedFetch,
    claim: LocationClaim | null,
    live: SiteLive = async () => true,
    timer: FlushTimer | null = null,
  ): Promise<void> {
    const verified = f.verification !== null;
    const counter = counterKey({ origin: f.origin, crawler: f.crawler, verified });
    let pending = this.#pending.get(log);
    if (!pending) this.#pending.set(log, (pending = { counts: new Map(), since: f.at }));
    const count = pending.counts.get(counter);
    if (count) count.requests++;
    else pending.counts.set(counter, { origin: f.origin, crawler: f.crawler, verified, requests: 1 });
    // A flush takes its log's counts out of `pending` at once (before its first await).
    const work = this.#due(f.at).map(([l, p]) => this.#flush(l, p, f.at, live));
    if (timer && this.#pending.size > 0 && this.#timerLost(f.at)) this.#startTimer(timer, f.at, live);
    if (verified && f.document !== null) work.push(this.#writeFetch(log, { ...f, document: f.document }, claim));
    const failed = (await Promise.allSettled(work)).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  /** Whether no timer is running: none started, or the last one is past due by TIMER_LOST_MS (or started on a clock ahead of `now`, a test's). */
  #timerLost(now: number): boolean {
    return this.#timer === null || now > this.#timer.due + TIMER_LOST_MS || now < this.#timer.startedAt;
  }

  /** Starts `timer`: when it fires, every log's pending counts go, each through its own log, as at the time it fires. */
  #startTimer(timer: FlushTimer, now: number, live: SiteLive): void {
    const started = { startedAt: now, due: now + timer.delayMs };
    this.#timer = started;
    timer.start(async () => {
      if (this.#timer === started) this.#timer = null;
      const flushes = [...this.#pending].map(([l, p]) => this.#flush(l, p, started.due, live));
      const failed = (await Promise.allSettled(flushes)).find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
    });
  }

  /**
   * The logs due: one this isolate never flushed to (so a database's counts exist before any burst),
   * and those whose oldest pending count is COUNT_FLUSH_MS old (a clock behind `since`, a test's, counts as due).
   */
  #due(now: number): [CrawlerLogStore, Pending][] {
    return [...this.#pending].filter(([log, p]) => !this.#flushed.has(log) || now - p.since >= COUNT_FLUSH_MS || now < p.since);
  }

  async #writeFetch(log: CrawlerLogStore, f: ObservedFetch & { document: string }, claim: LocationClaim | null): Promise<void> {
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

  async #flush(log: CrawlerLogStore, pending: Pending, now: number, live: SiteLive): Promise<void> {
    this.#pending.delete(log);
    this.#flushed.add(log);
    let counts = [...pending.counts.values()];
    try {
      // A site deleted while its counts waited here is not written back after its purge (issue 50):
      // the origins are few (this database's sites), each asked once.
      const origins = [...new Set(counts.map((c) => c.origin))];
      const gone = new Set((await Promise.all(origins.map(async (o) => ((await live(o)) ? null : o)))).filter((o) => o !== null));
      if (gone.size > 0) counts = counts.filter((c) => !gone.has(c.origin));
      if (counts.length > 0) await log.addCounts(counts, now);
    } catch (error) {
      // Put back into this log's pending, to go with its next flush: the keys are few (its sites × crawlers × 2).
      let again = this.#pending.get(log);
      if (!again) this.#pending.set(log, (again = { counts: new Map(), since: pending.since }));
      for (const c of counts) {
        const key = counterKey(c);
        const p = again.counts.get(key);
        if (p) p.requests += c.requests;
        else again.counts.set(key, c);
      }
      throw error;
    }
  }
}
