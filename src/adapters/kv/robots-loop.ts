/**
 * The robots.txt loop record of each site (src/robots/loop-store.ts) in the SNAPSHOTS KV namespace,
 * next to the last good copy: one key per site, `robots-loop/1/{origin}`, the time as its value.
 * It expires on its own a week after it was last written, so a loop nobody fixed and nobody asks
 * for again does not stay in status for good.
 */
import type { RobotsLoopStore } from "../../robots/loop-store.ts";

const EXPIRY_SECONDS = 7 * 24 * 3600;

const keyOf = (origin: string): string => `robots-loop/1/${origin}`;

export class KvRobotsLoopStore implements RobotsLoopStore {
  readonly #kv: KVNamespace;

  constructor(kv: KVNamespace) {
    this.#kv = kv;
  }

  async lastSeen(origin: string): Promise<number | null> {
    const value = await this.#kv.get(keyOf(origin), "text");
    const at = value === null ? Number.NaN : Number(value);
    return Number.isFinite(at) ? at : null;
  }

  async record(origin: string, at: number): Promise<void> {
    await this.#kv.put(keyOf(origin), String(at), { expirationTtl: EXPIRY_SECONDS });
  }

  async clear(origin: string): Promise<void> {
    await this.#kv.delete(keyOf(origin));
  }
}
