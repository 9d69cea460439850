/**
 * Writes during a move (docs/capacity.md "Writes during a move"). A loc being moved is served by
 * its old home until the flip and by its new home from it on, so a write to it is applied in its
 * old home (the answer's counts are that write's), then its row as the old home now holds it —
 * live or deleted, with its change stamp — is put in the new home over any older row. The copy
 * only fills locs the new home lacks (rebalance.ts), so it never writes over what a write put
 * there, whichever came first; the catch-up before the flip (catch-up.ts) brings over what
 * reached an old home only (a sync's commit, a write killed between the two).
 *
 * Cost: per 500 moving locs, one read in the old home and one statement in the new one.
 */
import type { RecordStore } from "../store/port.ts";
import { type PartitionLayout, homeOf, movingTo } from "./layout.ts";

/** Puts the rows of the moving ones of `locs` in their new homes, as their old homes hold them now. */
export async function forwardMoving(parts: readonly RecordStore[], locs: readonly string[], layout: PartitionLayout): Promise<void> {
  if (layout.target <= layout.settled) return;
  const byHome = new Map<number, string[]>();
  for (const loc of locs) {
    if (movingTo(loc, layout) === null) continue;
    const home = homeOf(loc, layout);
    let group = byHome.get(home);
    if (!group) byHome.set(home, (group = []));
    group.push(loc);
  }
  for (const [home, group] of byHome) {
    // Read and marked as moving in one statement: hidden in the old home from the flip on (migration 0025).
    const rows = await copyOf(parts[home]!).rows(group, layout.target);
    const byTarget = Map.groupBy(rows, (row) => movingTo(row.loc, layout)!);
    await Promise.all([...byTarget].map(([to, moving]) => copyOf(parts[to]!).put(moving, "newer")));
  }
}

export function copyOf(store: RecordStore): NonNullable<RecordStore["copy"]> {
  if (!store.copy) throw new Error("a partitioned site's store must copy its rows (D1)");
  return store.copy;
}
