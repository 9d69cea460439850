/**
 * The matcher of the stored ranges, kept per isolate: built from the store (range-store.ts) at the
 * first call and again at most every RELOAD_MS, so a request claiming a crawler pays no KV read but
 * once in five minutes per isolate (1 list and one read per crawler). A refresh is therefore seen
 * within KV's propagation (≤ 60 s) plus five minutes. Until a list is stored (a new deployment, or
 * `npm start` before its first heartbeat's `crawler-ranges` job), the store is looked at again every
 * EMPTY_RELOAD_MS instead: the first lists verify within seconds, not five minutes. A load that
 * fails keeps the matcher there was (tried again a minute later); nothing here throws to the caller.
 */

import type { CrawlerRangeStore } from "./range-store.ts";
import { type RangeMatcher, compileRanges } from "./ranges.ts";

const RELOAD_MS = 5 * 60_000;
/** After a load that found no list: the next call looks again this much later (one KV list per isolate at most). */
const EMPTY_RELOAD_MS = 10_000;
/** After a failed load: the next call tries again this much later. */
const RETRY_MS = 60_000;

interface Cached {
  /** null: nothing stored (yet), or no load has worked. */
  matcher: RangeMatcher | null;
  /** When the matcher was loaded (ms): a clock behind it (a test's `now`) reloads. */
  loadedAt: number;
  /** Reload at or after this time (ms). */
  until: number;
  /** A load under way; callers that have no matcher yet wait for it. */
  loading: Promise<RangeMatcher | null> | null;
}

/** Per isolate and store (the wiring makes one store per database's services, per isolate). */
const cache = new WeakMap<CrawlerRangeStore, Cached>();

async function load(store: CrawlerRangeStore, entry: Cached, now: number): Promise<RangeMatcher | null> {
  try {
    const lists = await store.loadAll();
    entry.matcher = lists.some((l) => l.prefixes.length > 0) ? compileRanges(lists) : null;
    entry.until = now + (entry.matcher === null ? EMPTY_RELOAD_MS : RELOAD_MS);
  } catch (err) {
    console.error(JSON.stringify({ event: "sitemap.crawlers.ranges", outcome: "load failed", error: err instanceof Error ? err.message : String(err) }));
    entry.until = now + RETRY_MS;
  }
  entry.loadedAt = now;
  return entry.matcher;
}

/** The matcher of what `store` holds, or null when nothing could be loaded (no store, nothing stored, KV failing from the start). */
export async function rangeMatcher(store: CrawlerRangeStore | null, now = Date.now()): Promise<RangeMatcher | null> {
  if (store === null) return null;
  let entry = cache.get(store);
  if (!entry) cache.set(store, (entry = { matcher: null, loadedAt: 0, until: 0, loading: null }));
  // A clock behind the last load (a test's `now`) reloads too.
  if (now < entry.until && now >= entry.loadedAt) return entry.matcher;
  if (entry.loading === null) {
    const loading = load(store, entry, now);
    entry.loading = loading;
    void loading.then(() => {
      if (entry.loading === loading) entry.loading = null;
    });
  } else if (entry.matcher !== null) {
    // Another caller is reloading: the matcher there is serves until it is done.
    return entry.matcher;
  }
  return entry.loading;
}
