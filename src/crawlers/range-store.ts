/**
 * The crawlers' published IP ranges as last refreshed (src/crawlers/refresh.ts), one list per
 * crawler of CRAWLER_IP_RANGES. Kept in KV next to the snapshots (src/adapters/kv/crawler-range-store.ts),
 * so a refresh is seen everywhere within KV's propagation (up to 60 s); read by each isolate's
 * matcher (range-cache.ts) and by status (range-status.ts).
 */
import type { CrawlerName } from "./types.ts";

/** One crawler's list. A failed refresh keeps the prefixes fetched before it and says why in `error`. */
export interface StoredRanges {
  name: CrawlerName;
  /** Where the list was (last) fetched from. */
  url: string;
  /** CIDR prefixes, canonical (src/crawlers/ranges.ts `parseRangeFile`); empty when no fetch has worked yet. */
  prefixes: readonly string[];
  /** Prefixes of the list refused as implausibly wide (src/crawlers/ranges.ts SHORTEST_PREFIX), a few at most; absent in lists stored before. */
  refused?: readonly string[];
  /** When `prefixes` were fetched (ms since epoch); null: never. */
  fetchedAt: number | null;
  /** When the last refresh tried, whether it worked or not (ms since epoch). */
  checkedAt: number;
  /** What went wrong with the last refresh (no secret: a status, "timed out", "not JSON"…); null when it worked. */
  error: string | null;
}

export interface CrawlerRangeStore {
  /** Every stored list (those of crawlers no longer configured too, until they expire). */
  loadAll(): Promise<StoredRanges[]>;
  /** Replaces the list of `list.name`. */
  save(list: StoredRanges): Promise<void>;
}
