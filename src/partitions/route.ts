/** Which partition a write goes to: the one that holds the loc now (layout.ts), also while it is being moved (forward.ts). */
import { type PartitionLayout, homeOf } from "./layout.ts";

/** Items grouped by the partition that holds their loc now, in their first order. */
export function byPartition<T>(items: readonly T[], locOf: (item: T) => string, layout: PartitionLayout): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const p = homeOf(locOf(item), layout);
    let group = groups.get(p);
    if (!group) groups.set(p, (group = []));
    group.push(item);
  }
  return groups;
}
