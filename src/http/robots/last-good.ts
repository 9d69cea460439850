/**
 * When the last good copy (src/robots/last-good-store.ts) is written: after a good fetch, in
 * `waitUntil`, only when the bytes changed or the stored copy is older than REFRESH_MS. A busy
 * site (or ROBOTS_MAX_AGE=0) then costs one KV read per good fetch and a write an hour at most;
 * the refresh keeps the copy's age honest and its expiry away while the origin is healthy.
 *
 * KV allows one write a second per key, and requests that arrive together all find the copy
 * stale: so an isolate writes each origin's copy through one writer, at most once a second,
 * the newest copy asked for winning (the ones it replaced were never the origin's last word).
 */
import type { LastGoodRobots, LastGoodStamp, RobotsLastGoodStore } from "../../robots/last-good-store.ts";

export const REFRESH_MS = 60 * 60 * 1000;
/** KV's limit: one write a second to a key. */
export const WRITE_GAP_MS = 1_000;
/** Writers kept for the gap after their last write; the map is pruned past this many. */
const MAX_WRITERS = 1_000;

interface Writer {
  /** When this isolate last wrote the key (ms, wall clock). */
  last: number;
  /** What it wrote then: a copy of the same bytes asked for meanwhile is not written again. */
  written: LastGoodStamp | null;
  /** The copy waiting for the gap; a later request's replaces it. */
  next: LastGoodRobots | null;
  /** The write loop under way, if any: every request whose copy it takes waits for it. */
  busy: Promise<void> | null;
}

const writers = new Map<string, Writer>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function digestOf(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(hash.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function writeLoop(store: RobotsLastGoodStore, origin: string, w: Writer): Promise<void> {
  try {
    while (w.next !== null) {
      const wait = w.last + WRITE_GAP_MS - Date.now();
      if (wait > 0) await sleep(wait);
      const copy = w.next;
      w.next = null;
      if (copy.digest === w.written?.digest && copy.fetchedAt - w.written.fetchedAt < REFRESH_MS) continue;
      w.last = Date.now();
      w.written = { digest: copy.digest, fetchedAt: copy.fetchedAt };
      await store.put(origin, copy);
    }
  } finally {
    w.busy = null;
  }
}

function writerOf(origin: string): Writer {
  let w = writers.get(origin);
  if (w === undefined) {
    if (writers.size >= MAX_WRITERS) {
      const now = Date.now();
      for (const [key, other] of writers) if (other.busy === null && now - other.last >= WRITE_GAP_MS) writers.delete(key);
    }
    w = { last: 0, written: null, next: null, busy: null };
    writers.set(origin, w);
  }
  return w;
}

/** Stores `body` as `origin`'s last good copy unless the same bytes were stored less than REFRESH_MS ago. */
export async function rememberGood(store: RobotsLastGoodStore, origin: string, body: Uint8Array, now: number): Promise<"stored" | "unchanged"> {
  const digest = await digestOf(body);
  const w = writerOf(origin);
  // The same bytes already on their way to KV from this isolate: nothing to add.
  if (w.next?.digest === digest) {
    await w.busy;
    return "unchanged";
  }
  const stamp = await store.stamp(origin);
  if (stamp !== null && stamp.digest === digest && now - stamp.fetchedAt < REFRESH_MS) return "unchanged";
  w.next = { body, digest, fetchedAt: now };
  w.busy ??= writeLoop(store, origin, w);
  await w.busy;
  return "stored";
}
