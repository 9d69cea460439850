/**
 * The move's catch-up (docs/capacity.md "Writes during a move"). A write during a move reaches the
 * loc's new home by its own forward (forward.ts); what reaches an old home only — a sync's or a
 * mirror's commit deleting what its input lacked, a write killed between its two databases — is
 * brought over here: each old partition's own change feed (rows it hides included) is read from
 * the move's start, and the moving locs' rows are put in their new homes over any older row. Once
 * every feed is read to its head, the last minute is read once more, right before the switch: a
 * write's stamp is taken before it commits.
 *
 * Before the flip, rows go over as stored, stamp included (the site pass after the flip renders
 * every row of every partition). A minute after the flip the feeds are read once more, from where
 * the flip left them, for what a write that read the layout before the flip left in an old home:
 * then only deletions go over, stamped anew so that the new home's regeneration sees them (a live
 * row written there is never older than a write acknowledged before it).
 */
import type { ChangeCursor, RecordStore } from "../store/port.ts";
import { copyOf } from "./forward.ts";

/** Changes read per page of an old partition's feed. */
const PAGE_ROWS = 5_000;
/** The feeds are read from this long before the move's start: a write that read the layout just before it may commit just after. */
const START_MARGIN_MS = 60_000;
/** How long a write may take from its stamp to its commit, for the catch-up (the regeneration's settle window is the same idea). */
const SETTLE_MS = 60_000;
/** The catch-up after the flip waits this long: writes that read the layout before the flip are over by then. */
export const AFTER_FLIP_MS = 60_000;

const isBefore = (a: ChangeCursor, b: ChangeCursor): boolean => a.stamp < b.stamp || (a.stamp === b.stamp && a.key < b.key);

/** The cursors a minute before `now` (or where they are, if earlier): what the last read before the switch reads again. */
export const settleFrom = (cursors: readonly ChangeCursor[], now: number): ChangeCursor[] =>
  cursors.map((c) => {
    const settled = { stamp: now - SETTLE_MS, key: 0, moveSeq: c.moveSeq };
    return isBefore(c, settled) ? c : settled;
  });

/** Cursors of the old partitions' feeds at a move's start. */
export const catchUpFrom = (partitions: number, now: number): ChangeCursor[] =>
  Array.from({ length: partitions }, () => ({ stamp: now - START_MARGIN_MS, key: 0, moveSeq: Number.MAX_SAFE_INTEGER }));

export interface CatchUpOptions {
  /** The partition a changed loc of old partition `p` now goes to, or null when it stays. */
  goesTo: (loc: string, p: number) => number | null;
  /** true: only deletions go over (after the flip); false: rows as stored (before it). */
  deletionsOnly: boolean;
  maxRows: number;
  inTime: () => boolean;
  /** Saves the layout, whose `catchUp` cursors this moves on page by page. */
  save: () => Promise<void>;
  now: number;
}

/** Reads the old partitions' feeds on from `cursors` (moved on in place, page by page, then `save`d) until every one is at its head (done) or the step's budget is spent. */
export async function catchUp(
  parts: readonly RecordStore[],
  origin: string,
  cursors: ChangeCursor[],
  options: CatchUpOptions,
): Promise<{ done: boolean; read: number; written: number }> {
  let read = 0;
  let written = 0;
  for (let p = 0; p < cursors.length; p++) {
    for (;;) {
      if (read >= options.maxRows || !options.inTime()) return { done: false, read, written };
      const page = await copyOf(parts[p]!).changes(origin, cursors[p]!, Math.min(PAGE_ROWS, options.maxRows - read));
      if (page.rows.length === 0) break;
      read += page.rows.length;
      // Each changed loc that goes elsewhere, with where (a section move's row is not the record's).
      const moving = new Map<string, { to: number; stamp: number; deleted: boolean }>();
      for (const row of page.rows) {
        const to = row.moved ? null : options.goesTo(row.loc, p);
        if (to !== null) moving.set(row.loc, { to, stamp: row.updatedAt, deleted: row.deleted });
      }
      if (options.deletionsOnly) {
        const deleted = [...moving].filter(([, m]) => m.deleted);
        for (const [to, rows] of Map.groupBy(deleted, ([, m]) => m.to)) {
          written += await copyOf(parts[to]!).deleteOlder(
            rows.map(([loc, m]) => ({ loc, stamp: m.stamp })),
            options.now,
          );
        }
      } else if (moving.size > 0) {
        const rows = await copyOf(parts[p]!).rows([...moving.keys()]);
        for (const [to, group] of Map.groupBy(rows, (row) => moving.get(row.loc)!.to)) written += await copyOf(parts[to]!).put(group, "newer");
      }
      cursors[p] = page.cursor;
      await options.save();
      if (page.done) break;
    }
  }
  return { done: true, read, written };
}
