/**
 * The status of a partitioned site's partitions (SITE_DATABASES "origin=DB_1,DB_2,…"): whether the
 * list keeps the databases recorded for them in their places (src/partitions/database-list.ts),
 * the layout (how many hold records, a move under way and where its copy stands) and each
 * partition's own regeneration, which runs apart from the others. Null for any other site.
 */
import { hidesRows } from "../partitions/layout.ts";
import { PIN_GRACE_MS } from "../partitions/pinned.ts";
import type { Services } from "../services-type.ts";

export async function partitionsStatus(s: Services, origin: string) {
  if (!s.partitions || !s.layouts) return null;
  // The list first: under one that does not match, the layout is left unread (its database may not be the site's first).
  const databases = s.databaseList ? await s.databaseList.status() : null;
  const layout = databases?.ok === false ? null : await s.layouts.read();
  const now = Date.now();
  const each = await Promise.all(
    s.partitions.map(async (part, partition) => {
      const progress = part.regen ? await part.regen.peek(origin) : null;
      const [last] = part.regen ? await part.regen.runs(origin, 1) : [];
      return {
        partition,
        // A database listed after the others is served once a move has filled it (null: the list does not match).
        served: layout ? partition < layout.settled : null,
        running: progress !== null && progress.leaseUntil > now,
        pendingShards: progress?.state.pending.length ?? 0,
        passPending: progress?.state.pass ?? null,
        lastRun: last ? { ok: last.ok, ...(last.summary as object) } : null,
      };
    }),
  );
  return {
    configured: s.partitions.length,
    // SITE_DATABASES against the databases recorded for the partitions: a problem names the list and what to restore.
    databases,
    settled: layout?.settled ?? null,
    // A move: the databases being filled, and the old partition whose rows are being copied, or then the new one whose manifest is being planned.
    move:
      layout && layout.target > layout.settled
        ? {
            target: layout.target,
            copying: layout.cursor && layout.cursor.partition < layout.settled ? layout.cursor : null,
            building: layout.cursor && layout.cursor.partition >= layout.settled && layout.cursor.partition < layout.target ? layout.cursor : null,
            // Copy and build done: the catch-up of the old partitions' changes, then the flip (a waiting step's reason is the rebalance job's outcome).
            catchingUp: layout.cursor !== null && layout.cursor.partition >= layout.target,
          }
        : null,
    lastMoveAt: layout && layout.flippedAt !== null ? new Date(layout.flippedAt).toISOString() : null,
    // Rows the last move left in the old partitions: hidden, removed from `purgeFrom` on (src/partitions/purge.ts).
    leftBehind: layout && hidesRows(layout) ? { purgeFrom: new Date(layout.flippedAt! + PIN_GRACE_MS).toISOString(), purging: layout.purgeCursor } : null,
    partitions: each,
  };
}
