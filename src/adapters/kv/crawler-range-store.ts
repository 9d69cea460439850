/**
 * The crawlers' published IP ranges (src/crawlers/range-store.ts) in the SNAPSHOTS KV namespace:
 * one key per crawler, `crawler-ranges/1/{name}`, the list as JSON. The prefix cannot meet the
 * snapshots' `s1/` keys (deleted only by name) nor robots.txt's `robots/1/`. A list expires a month
 * after its last refresh, so a crawler removed from CRAWLER_IP_RANGES leaves nothing behind for good;
 * the daily refresh writes every configured one again, failed or not.
 */
import type { CrawlerRangeStore, StoredRanges } from "../../crawlers/range-store.ts";

const PREFIX = "crawler-ranges/1/";
const EXPIRY_SECONDS = 30 * 24 * 3600;

type Value = Omit<StoredRanges, "name">;

function isValue(value: unknown): value is Value {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v["url"] === "string" &&
    Array.isArray(v["prefixes"]) &&
    v["prefixes"].every((p) => typeof p === "string") &&
    (v["fetchedAt"] === null || typeof v["fetchedAt"] === "number") &&
    typeof v["checkedAt"] === "number" &&
    (v["refused"] === undefined || (Array.isArray(v["refused"]) && v["refused"].every((p) => typeof p === "string"))) &&
    (v["error"] === null || typeof v["error"] === "string")
  );
}

function parsed(text: string | null): unknown {
  try {
    return text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

export class KvCrawlerRangeStore implements CrawlerRangeStore {
  readonly #kv: KVNamespace;

  constructor(kv: KVNamespace) {
    this.#kv = kv;
  }

  async loadAll(): Promise<StoredRanges[]> {
    // A handful of keys (CRAWLER_IP_RANGES lists at most 10): one page.
    const { keys } = await this.#kv.list({ prefix: PREFIX, limit: 100 });
    const read = await Promise.all(
      keys.map(async ({ name: key }) => {
        // A value of another shape (written by a later version, or damaged) is as if none were stored.
        const value = parsed(await this.#kv.get(key, "text"));
        return isValue(value) ? { name: key.slice(PREFIX.length), ...value } : null;
      }),
    );
    return read.filter((r): r is StoredRanges => r !== null);
  }

  async save(list: StoredRanges): Promise<void> {
    const { name, ...value } = list;
    await this.#kv.put(PREFIX + name, JSON.stringify(value), { expirationTtl: EXPIRY_SECONDS });
  }
}
