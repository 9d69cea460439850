/**
 * The status of a partitioned site's partitions (SITE_DATABASES "origin=DB_1,DB_2,…"): the layout
 * (how many hold records, a move under way and where its copy stands) and each partition's own
 * regeneration, which runs apart from the others. Null for any other site.
 */
import { hidesRows } from "../partitions/layout.ts";
import { PIN_GRACE_MS } from "../partitions/pinned.ts";
import type { Services } from "../services-type.ts";

export async function partitionsStatus(s: Services, origin: string) {
  if (!s.partitions || !s.layouts) return null;
  const layout = await s.layouts.read();
  const now = Date.now();
  const each = await Promise.all(
    s.partitions.map(async (part, partition) => {
      const progress = part.regen ? await part.regen.peek(origin) : null;
      const [last] = part.regen ? await part.regen.runs(origin, 1) : [];
      return {
        partition,
        // A database listed after the others is served once a move has filled it.
        served: partition < layout.settled,
        running: progress !== null && progress.leaseUntil > now,
        pendingShards: progress?.state.pending.length ?? 0,
        passPending: progress?.state.pass ?? null,
        lastRun: last ? { ok: last.ok, ...(last.summary as object) } : null,
      };
    }),
  );
  return {
    configured: s.partitions.length,
    settled: layout.settled,
    // A move: the databases being filled, and the old partition whose rows are being copied, or then the new one whose manifest is being planned.
    move:
      layout.target > layout.settled
        ? {
            target: layout.target,
            copying: layout.cursor && layout.cursor.partition < layout.settled ? layout.cursor : null,
            building: layout.cursor && layout.cursor.partition >= layout.settled ? layout.cursor : null,
          }
        : null,
    lastMoveAt: layout.flippedAt === null ? null : new Date(layout.flippedAt).toISOString(),
    // Rows the last move left in the old partitions: hidden, removed from `purgeFrom` on (src/partitions/purge.ts).
    leftBehind: hidesRows(layout) ? { purgeFrom: new Date(layout.flippedAt! + PIN_GRACE_MS).toISOString(), purging: layout.purgeCursor } : null,
    partitions: each,
  };
}
