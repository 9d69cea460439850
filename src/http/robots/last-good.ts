/**
 * When the last good copy (src/robots/last-good-store.ts) is written: after a good fetch, in
 * `waitUntil`, only when the bytes changed or the stored copy is older than REFRESH_MS. A busy
 * site (or ROBOTS_MAX_AGE=0) then costs one KV read per good fetch and a write an hour at most,
 * far from KV's one write per second per key; the refresh keeps the copy's age honest and its
 * expiry away while the origin is healthy.
 */
import type { LastGoodRobots, RobotsLastGoodStore } from "../../robots/last-good-store.ts";
import { afterKeyWriteInterval } from "./key-rate.ts";

export const REFRESH_MS = 60 * 60 * 1000;

async function digestOf(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(hash.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Stores `body` as `origin`'s last good copy unless the same bytes were stored less than REFRESH_MS ago. */
export async function rememberGood(store: RobotsLastGoodStore, origin: string, body: Uint8Array, now: number): Promise<"stored" | "unchanged"> {
  const digest = await digestOf(body);
  const stamp = await store.stamp(origin);
  if (stamp !== null && stamp.digest === digest && now - stamp.fetchedAt < REFRESH_MS) return "unchanged";
  const copy: LastGoodRobots = { body, digest, fetchedAt: now };
  // A file that changed within a second of the last write: stored once that second is over.
  if (stamp !== null) await afterKeyWriteInterval(stamp.fetchedAt, now);
  await store.put(origin, copy);
  return "stored";
}
