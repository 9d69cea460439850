/**
 * A partitioned site's services with one partition's move copy held at a gate: a step's page write
 * (RowCopy.put of the copy, `missing`) waits until `open()`, so a test can cross it with writes or
 * with another step (test/workers/partitions-move-race.test.ts, partitions-writes-during-move.test.ts).
 */
import type { Services } from "../../../src/services-type.ts";
import type { RowCopy } from "../../../src/store/port.ts";

/** A gate: `pass()` says it was reached (`entered` resolves) and waits until `open()`. */
export function gate(): { pass: () => Promise<void>; entered: Promise<void>; open: () => void } {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const entered = new Promise<void>((resolve) => (reached = resolve));
  return {
    pass: () => {
      reached();
      return opened;
    },
    entered,
    open,
  };
}

export function gatedCopy(site: Services, partition: number): { site: Services; entered: Promise<void>; open: () => void } {
  const held = gate();
  const parts = site.partitions!.map((p, i) => {
    if (i !== partition) return p;
    const inner = p.store.copy!;
    const copy: RowCopy = {
      page: (origin, after, limit) => inner.page(origin, after, limit),
      rows: (locs, movedIn) => inner.rows(locs, movedIn),
      markMoved: (keys, movedIn) => inner.markMoved(keys, movedIn),
      movedCounts: (origin, ranges, movedIn) => inner.movedCounts(origin, ranges, movedIn),
      async put(rows, mode) {
        // Only the copy's own page writes wait; a write's forward ("newer") goes through.
        if (mode === "missing") await held.pass();
        return inner.put(rows, mode);
      },
      deleteOlder: (entries, now) => inner.deleteOlder(entries, now),
      head: () => inner.head(),
      changesAfter: (origin, after, limit) => inner.changesAfter(origin, after, limit),
    };
    return { ...p, store: { ...p.store, copy } };
  });
  return { site: { ...site, partitions: parts }, entered: held.entered, open: held.open };
}
