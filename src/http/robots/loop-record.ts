/**
 * When the loop record (src/robots/loop-store.ts) is written and cleared, always in `waitUntil`:
 * - a loop is recorded when none is, or when the record is older than RECORD_INTERVAL_MS, so that a
 *   crawler hammering a looping robots.txt costs one KV read per request and a write every ten
 *   minutes at most, and `lastSeenAt` stays that fresh;
 * - any other outcome means the origin answered (or is no longer fetched at all), so a record that
 *   is there is deleted: one KV read per uncached answer, a delete only when there is something to
 *   delete. KV is eventually consistent: a record written in another location may be seen, and so
 *   cleared, a minute or more later.
 *
 * KV allows one write a second per key (a delete is one), and requests that arrive together all
 * read the same record: so, as for the last good copy (last-good.ts), an isolate writes each
 * origin's record through one writer, at most once a second and a second after the time the record
 * it replaces names (written by any isolate), the newest change asked for winning; a change this
 * isolate is writing, or wrote after a request's read began, is not asked for again.
 */
import type { RobotsLoopStore } from "../../robots/loop-store.ts";
import { afterKeyWriteInterval } from "./key-rate.ts";
import { WRITE_GAP_MS } from "./last-good.ts";

export const RECORD_INTERVAL_MS = 10 * 60 * 1000;
/** Writers kept for the gap after their last write; the map is pruned past this many. */
const MAX_WRITERS = 1_000;

/** A change of the record: a loop seen at `at`, or the record seen naming `seen` deleted. */
type Change = { kind: "record"; at: number } | { kind: "clear"; seen: number };

interface Writer {
  /** When this isolate last wrote the key (ms, wall clock). */
  last: number;
  /** When that write ended (ms, wall clock): a read begun before it may not show it. */
  doneAt: number;
  /** What it wrote then. */
  written: Change | null;
  /** The change being written now. */
  writing: Change | null;
  /** The change waiting for the gap, with the time the record it replaces names; a later request's replaces it. */
  next: { change: Change; after: number | null } | null;
  /** The write loop under way, if any: every request whose change it takes waits for it. */
  busy: Promise<void> | null;
}

const writers = new Map<string, Writer>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const fresh = (at: number, now: number): boolean => at <= now && now - at < RECORD_INTERVAL_MS;

async function writeLoop(store: RobotsLoopStore, origin: string, w: Writer): Promise<void> {
  try {
    while (w.next !== null) {
      const wait = w.last + WRITE_GAP_MS - Date.now();
      if (wait > 0) await sleep(wait);
      const { after } = w.next;
      // The record's own time says when its key was written last, by whichever isolate.
      if (after !== null) await afterKeyWriteInterval(after, Date.now());
      const next = w.next;
      w.next = null;
      if (next === null) continue;
      w.last = Date.now();
      w.writing = next.change;
      if (next.change.kind === "record") await store.record(origin, next.change.at);
      else await store.clear(origin);
      w.written = next.change;
      w.doneAt = Date.now();
      w.writing = null;
    }
  } finally {
    w.writing = null;
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
    w = { last: 0, doneAt: 0, written: null, writing: null, next: null, busy: null };
    writers.set(origin, w);
  }
  return w;
}

/** The change this isolate is about to make, is making, or made after `readAt` (what a read begun then may not show). */
function pending(w: Writer, readAt: number): Change | null {
  return w.next?.change ?? w.writing ?? (w.doneAt >= readAt ? w.written : null);
}

async function change(store: RobotsLoopStore, origin: string, w: Writer, next: Change, after: number | null): Promise<void> {
  w.next = { change: next, after };
  w.busy ??= writeLoop(store, origin, w);
  await w.busy;
}

export async function recordLoop(store: RobotsLoopStore, origin: string, now: number): Promise<"recorded" | "unchanged"> {
  const w = writerOf(origin);
  const readAt = Date.now();
  const last = await store.lastSeen(origin);
  if (last !== null && fresh(last, now)) return "unchanged";
  // Checked after the read: a request that arrived with this one may have asked for the write meanwhile.
  const mine = pending(w, readAt);
  if (mine?.kind === "record" && fresh(mine.at, now)) {
    await w.busy;
    return "unchanged";
  }
  await change(store, origin, w, { kind: "record", at: now }, last);
  return "recorded";
}

export async function clearLoop(store: RobotsLoopStore, origin: string, now = Date.now()): Promise<"cleared" | "none"> {
  const w = writerOf(origin);
  const readAt = Date.now();
  const last = await store.lastSeen(origin);
  const mine = pending(w, readAt);
  // Nothing stored, and no record of this isolate's on its way: nothing to delete.
  if (last === null && mine?.kind !== "record") return "none";
  // The record seen is one this isolate deletes or deleted (a read that predates the delete, or KV's cache).
  const alreadyCleared = (c: Change | null): boolean => c?.kind === "clear" && (last === null || c.seen >= last);
  if (alreadyCleared(mine) || (last !== null && alreadyCleared(w.written))) {
    await w.busy;
    return "none";
  }
  await change(store, origin, w, { kind: "clear", seen: last ?? now }, last);
  return "cleared";
}
