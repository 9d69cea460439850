/** Which partition a write goes to: the one that holds the loc now (layout.ts), unless it is being moved. */
import { StoreBusyError } from "../store/errors.ts";
import { type PartitionLayout, homeOf, isMoving } from "./layout.ts";

/** How long a writer waits before sending a batch again that touched records being moved. */
const MOVE_RETRY_SECONDS = 60;

/**
 * Items grouped by the partition that holds their loc, in their first order. While a move runs,
 * a batch touching a loc being moved is refused whole, nothing written: its copy is under way.
 */
export function byPartition<T>(items: readonly T[], locOf: (item: T) => string, layout: PartitionLayout): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    if (isMoving(locOf(item), layout)) {
      throw new StoreBusyError(
        "busy",
        "some of these records are being moved onto a database added to the site; send the batch again once the move has flipped",
        MOVE_RETRY_SECONDS,
      );
    }
    const p = homeOf(locOf(item), layout);
    let group = groups.get(p);
    if (!group) groups.set(p, (group = []));
    group.push(item);
  }
  return groups;
}
