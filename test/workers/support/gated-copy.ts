/**
 * A partitioned site's services with one partition's move copy held at a gate: a step's page write
 * (RowCopy.put of the copy, `missing`) waits until `open()`, so a test can cross it with writes or
 * with another step (test/workers/partitions-move-race.test.ts, partitions-writes-during-move.test.ts).
 */
import type { Services } from "../../../src/services-type.ts";
import type { RowCopy } from "../../../src/store/port.ts";

export function gatedCopy(site: Services, partition: number): { site: Services; entered: Promise<void>; open: () => void } {
  let open!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (entered = resolve));
  const parts = site.partitions!.map((p, i) => {
    if (i !== partition) return p;
    const inner = p.store.copy!;
    const copy: RowCopy = {
      page: (origin, after, limit) => inner.page(origin, after, limit),
      rows: (locs) => inner.rows(locs),
      async put(rows, mode) {
        // Only the copy's own page writes wait; a write's forward ("newer") goes through.
        if (mode === "missing") {
          entered();
          await gate;
        }
        return inner.put(rows, mode);
      },
      deleteOlder: (entries, now) => inner.deleteOlder(entries, now),
      changes: (origin, after, limit) => inner.changes(origin, after, limit),
    };
    return { ...p, store: { ...p.store, copy } };
  });
  return { site: { ...site, partitions: parts }, entered: reached, open };
}
