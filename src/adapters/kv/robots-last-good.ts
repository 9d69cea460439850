/**
 * The last good robots.txt of each site (src/robots/last-good-store.ts) in the SNAPSHOTS KV
 * namespace: one key per site, `robots/1/{origin}`, the bytes as the value and the stamp as its
 * metadata (so `stamp` reads no bytes). The prefix cannot meet the snapshots' `s1/` keys, which
 * the snapshot garbage collection deletes only by name.
 */
import type { LastGoodRobots, LastGoodStamp, RobotsLastGoodStore } from "../../robots/last-good-store.ts";

/** KV drops a copy this long after it was last written: a site gone from SITES leaves nothing behind for good. */
const EXPIRY_SECONDS = 30 * 24 * 3600;

const keyOf = (origin: string): string => `robots/1/${origin}`;

function isStamp(value: unknown): value is LastGoodStamp {
  if (typeof value !== "object" || value === null) return false;
  const m = value as Record<string, unknown>;
  return typeof m["digest"] === "string" && typeof m["fetchedAt"] === "number";
}

export class KvRobotsLastGoodStore implements RobotsLastGoodStore {
  readonly #kv: KVNamespace;

  constructor(kv: KVNamespace) {
    this.#kv = kv;
  }

  async get(origin: string): Promise<LastGoodRobots | null> {
    const { value, metadata } = await this.#kv.getWithMetadata<LastGoodStamp>(keyOf(origin), "arrayBuffer");
    if (value === null || !isStamp(metadata)) return null;
    return { body: new Uint8Array(value), digest: metadata.digest, fetchedAt: metadata.fetchedAt };
  }

  async stamp(origin: string): Promise<LastGoodStamp | null> {
    const { value, metadata } = await this.#kv.getWithMetadata<LastGoodStamp>(keyOf(origin), "stream");
    // Only the metadata is wanted: the bytes are never read.
    await value?.cancel();
    return value !== null && isStamp(metadata) ? { digest: metadata.digest, fetchedAt: metadata.fetchedAt } : null;
  }

  async put(origin: string, copy: LastGoodRobots): Promise<void> {
    const metadata: LastGoodStamp = { digest: copy.digest, fetchedAt: copy.fetchedAt };
    await this.#kv.put(keyOf(origin), copy.body, { metadata, expirationTtl: EXPIRY_SECONDS });
  }

  async remove(origin: string): Promise<void> {
    await this.#kv.delete(keyOf(origin));
  }
}
