/** What status shows of the published ranges (`crawlers.ranges`): each configured crawler's list as last refreshed. */
import type { Config } from "../config.ts";
import type { CrawlerRangeStore, StoredRanges } from "./range-store.ts";
import type { CrawlersStatus } from "./types.ts";

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * Per crawler of CRAWLER_IP_RANGES, in its order: its URL, how many prefixes verify it, when they
 * were fetched and last checked, and the last refresh's failure. One KV list and a read per stored
 * list; without a store (no SNAPSHOTS binding) or when KV fails, each shows as never fetched.
 */
export async function rangesStatus(store: CrawlerRangeStore | null, config: Pick<Config, "crawlers">): Promise<CrawlersStatus["ranges"]> {
  let stored = new Map<string, StoredRanges>();
  if (store !== null) {
    try {
      stored = new Map((await store.loadAll()).map((l) => [l.name, l]));
    } catch (err) {
      console.error("crawler ranges not read for status:", err instanceof Error ? err.message : err);
    }
  }
  return config.crawlers.ranges.map(({ name, url }) => {
    const list = stored.get(name);
    return {
      name,
      url,
      prefixes: list?.prefixes.length ?? 0,
      refused: [...(list?.refused ?? [])],
      fetchedAt: iso(list?.fetchedAt ?? null),
      checkedAt: iso(list?.checkedAt ?? null),
      error: list?.error ?? null,
    };
  });
}
