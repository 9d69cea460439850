/**
 * Removing what a move left behind. After a flip each old partition still holds the rows it gave
 * away, hidden (served.ts): for PIN_GRACE_MS they render the shards of an index read before the
 * flip (pinned.ts). After that they only take space — the space a database was added to free — so
 * the rebalance job removes them: each partition's rows walked in key order, a page at a time, the
 * rows whose home is another partition deleted for good (no tombstone: nothing served changes,
 * nothing is announced), the cursor saved after every page so that a killed step resumes. When the
 * walk is done, `purgedAt` says nothing is hidden any more and the partitions stop filtering.
 *
 * A loc's home never moves back to an older partition (jump hashing, home.ts), so a row hidden
 * under one layout stays hidden under every later one: a move started before the purge finished
 * changes nothing here (the purge waits for that move's flip, then starts over).
 */
import type { Services } from "../services-type.ts";
import type { ScannedRecord } from "../store/port.ts";
import { partitionOf } from "./home.ts";
import { type PartitionLayout, hidesRows } from "./layout.ts";
import { PIN_GRACE_MS } from "./pinned.ts";

/** Rows read per page: one scan query, then one delete statement. */
const PAGE_ROWS = 5_000;

/** Whether the rows the last move left behind are due for removal: no move under way, its catch-up done (catch-up.ts), the grace over. */
export const purgeDue = (layout: PartitionLayout, now: number): boolean =>
  layout.settled === layout.target && layout.catchUp === null && hidesRows(layout) && now - layout.flippedAt! >= PIN_GRACE_MS;

/** Pages of the removal until `maxRows` were read (or `deadline`, ms, passed); `save` records the layout (its cursor) after each. */
export async function purgeStep(
  parts: readonly Services[],
  origin: string,
  layout: PartitionLayout,
  now: number,
  maxRows: number,
  save: () => Promise<void>,
  deadline?: number,
): Promise<{ done: boolean; read: number; removed: number }> {
  let read = 0;
  let removed = 0;
  let cursor = layout.purgeCursor ?? { partition: 0, section: "", key: -1 };
  while (cursor.partition < layout.settled && read < maxRows && (deadline === undefined || Date.now() < deadline)) {
    const purge = parts[cursor.partition]!.store.purge;
    if (!purge) throw new Error("a partitioned site's store must remove rows (D1)");
    const page: ScannedRecord[] = [];
    for await (const row of purge.rows.scan(origin, { section: cursor.section, key: cursor.key + 1 }, null)) {
      page.push(row);
      if (page.length >= PAGE_ROWS) break;
    }
    if (page.length === 0) cursor = { partition: cursor.partition + 1, section: "", key: -1 };
    else {
      const p = cursor.partition;
      removed += await purge.purge(
        origin,
        page.filter((row) => partitionOf(row.loc, layout.settled) !== p).map((row) => row.key),
      );
      read += page.length;
      const last = page[page.length - 1]!;
      cursor = { partition: p, section: last.section, key: last.key };
    }
    layout.purgeCursor = cursor;
    await save();
  }
  if (cursor.partition < layout.settled) return { done: false, read, removed };
  layout.purgeCursor = null;
  layout.purgedAt = now;
  await save();
  return { done: true, read, removed };
}
