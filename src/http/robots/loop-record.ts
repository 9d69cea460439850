/**
 * When the loop record (src/robots/loop-store.ts) is written and cleared, always in `waitUntil`:
 * - a loop is recorded when none is, or when the record is older than RECORD_INTERVAL_MS, so that a
 *   crawler hammering a looping robots.txt costs one KV read per request and a write every ten
 *   minutes at most (KV takes one write per second per key), and `lastSeenAt` stays that fresh;
 * - any other outcome means the origin answered (or is no longer fetched at all), so a record that
 *   is there is deleted: one KV read per uncached answer, a delete only when there is something to
 *   delete (a second after the record was written at the earliest: KV's rate per key). KV is eventually consistent: a record written in another location may be seen, and so
 *   cleared, a minute or more later.
 */
import type { RobotsLoopStore } from "../../robots/loop-store.ts";
import { afterKeyWriteInterval } from "./key-rate.ts";

export const RECORD_INTERVAL_MS = 10 * 60 * 1000;

export async function recordLoop(store: RobotsLoopStore, origin: string, now: number): Promise<"recorded" | "unchanged"> {
  const last = await store.lastSeen(origin);
  if (last !== null && last <= now && now - last < RECORD_INTERVAL_MS) return "unchanged";
  await store.record(origin, now);
  return "recorded";
}

export async function clearLoop(store: RobotsLoopStore, origin: string, now = Date.now()): Promise<"cleared" | "none"> {
  const last = await store.lastSeen(origin);
  if (last === null) return "none";
  await afterKeyWriteInterval(last, now);
  await store.clear(origin);
  return "cleared";
}
