/**
 * The move's catch-up (docs/capacity.md "Writes during a move"). A write during a move reaches the
 * loc's new home by its own forward (forward.ts); what reaches an old home only — a sync's or a
 * mirror's commit deleting what its input lacked, a write killed between its two databases — is
 * brought over here: each old partition's commit-ordered feed (migration 0023; rows it hides
 * included) is read from its head at the move's start, and the moving locs' rows are put in their
 * new homes over any copy of an earlier commit. The cursor is a change number, not a stamp: a
 * change committed after the read is numbered past it, whatever its stamp says, so no window is
 * read again and none is waited for.
 *
 * Before the flip, rows go over as stored, stamp included (the site pass after the flip renders
 * every row of every partition). A minute after the flip the feeds are read on from where the
 * flip left them, for what a write that read the layout before the flip left in an old home: then
 * only deletions go over, stamped anew so that the new home's regeneration sees them; a row
 * written in the new home itself is never overwritten by a copy (row-copy.ts).
 */
import { COPY_PAGE_CHARS as PAGE_CHARS } from "../core/limits.ts";
import type { RecordStore, SequencedChange } from "../store/port.ts";
import { copyOf } from "./forward.ts";

/** Changes read per page of an old partition's feed. */
const PAGE_ROWS = 5_000;
/** The catch-up after the flip waits this long: writes that read the layout before the flip are over by then. */
export const AFTER_FLIP_MS = 60_000;

/** Cursors of the old partitions' feeds at a move's start: their heads (every change after is read). */
export const catchUpFrom = (parts: readonly RecordStore[]): Promise<number[]> => Promise.all(parts.map((part) => copyOf(part).head()));

export interface CatchUpOptions {
  /** The partition a changed loc of old partition `p` now goes to, or null when it stays. */
  goesTo: (loc: string, p: number) => number | null;
  /**
   * true: only deletions go over (after the flip); false: rows as stored (before it), marked in
   * their old homes as moving to `target` partitions (hidden there from the flip on, migration 0025).
   */
  deletionsOnly: boolean;
  target: number;
  maxRows: number;
  inTime: () => boolean;
  /** Saves the layout, whose `catchUp` cursors this moves on page by page. */
  save: () => Promise<void>;
  now: number;
}

/** The changes up to where the rows they read pass PAGE_CHARS (deletions are read as tombstones too), one at least. */
function withinChars(changes: readonly SequencedChange[]): readonly SequencedChange[] {
  let chars = 0;
  for (const [i, change] of changes.entries()) {
    chars += change.chars;
    if (chars > PAGE_CHARS && i > 0) return changes.slice(0, i);
  }
  return changes;
}

/** Reads the old partitions' feeds on from `cursors` (moved on in place, page by page, then `save`d) until every one is at its head (done) or the step's budget is spent. */
export async function catchUp(
  parts: readonly RecordStore[],
  origin: string,
  cursors: number[],
  options: CatchUpOptions,
): Promise<{ done: boolean; read: number; written: number }> {
  let read = 0;
  let written = 0;
  for (let p = 0; p < cursors.length; p++) {
    for (;;) {
      if (read >= options.maxRows || !options.inTime()) return { done: false, read, written };
      const limit = Math.min(PAGE_ROWS, options.maxRows - read);
      const feed = await copyOf(parts[p]!).changesAfter(origin, cursors[p]!, limit);
      if (feed.length === 0) break;
      // The rows a page reads whole stay within PAGE_CHARS of text (at least one): the rest is the next page's.
      const page = withinChars(feed);
      read += feed.length;
      // Each changed loc that goes elsewhere, with where and its last change of the page.
      const moving = new Map<string, { to: number; seq: number; deleted: boolean }>();
      for (const change of page) {
        const to = options.goesTo(change.loc, p);
        if (to !== null) moving.set(change.loc, { to, seq: change.seq, deleted: change.deleted });
      }
      if (options.deletionsOnly) {
        const deleted = [...moving].filter(([, m]) => m.deleted);
        for (const [to, rows] of Map.groupBy(deleted, ([, m]) => m.to)) {
          written += await copyOf(parts[to]!).deleteOlder(
            rows.map(([loc, m]) => ({ loc, seq: m.seq })),
            options.now,
          );
        }
      } else if (moving.size > 0) {
        // As they are now (a later change of a loc is read again by a later page, and goes over this one).
        const rows = await copyOf(parts[p]!).rows([...moving.keys()], options.target);
        for (const [to, group] of Map.groupBy(rows, (row) => moving.get(row.loc)!.to)) written += await copyOf(parts[to]!).put(group, "newer");
      }
      cursors[p] = page[page.length - 1]!.seq;
      await options.save();
      // The feed's end: a short page read whole (a page cut by its text goes on where it stopped).
      if (page.length === feed.length && feed.length < limit) break;
    }
  }
  return { done: true, read, written };
}
