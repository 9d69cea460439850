/**
 * Regeneration of a partitioned site: each partition is its own unit of work (its records, change
 * feed, manifest and lease in its own database), so partitions regenerate independently and in
 * parallel; the site's index lists each partition's last published shards (manifest-store.ts).
 */
import type { RunSummary } from "../regen/summary.ts";

/** One summary for the site from its partitions' runs (counts summed; the site converged when every partition did). */
export function siteSummary(origin: string, parts: readonly RunSummary[]): RunSummary {
  const first = parts[0]!;
  const total = (of: (s: RunSummary) => number) => parts.reduce((n, s) => n + of(s), 0);
  const errors = parts.flatMap((s, p) => (s.error ? [`partition ${p}: ${s.error}`] : []));
  return {
    ...first,
    origin,
    durationMs: Math.max(...parts.map((s) => s.durationMs)),
    mode: parts.some((s) => s.mode === "pass") ? "pass" : parts.some((s) => s.mode === "walk") ? "walk" : "incremental",
    changesRead: total((s) => s.changesRead),
    shardsChecked: total((s) => s.shardsChecked),
    shardsRendered: total((s) => s.shardsRendered),
    shardsUnchanged: total((s) => s.shardsUnchanged),
    rerenders: total((s) => s.rerenders),
    indexRendered: parts.some((s) => s.indexRendered),
    rowsRead: total((s) => s.rowsRead),
    bytesStored: total((s) => s.bytesStored),
    xmlBytes: total((s) => s.xmlBytes),
    published: parts.some((s) => s.published),
    // Versions are each partition's: the site's index version is their fingerprint (manifest-store.ts).
    previousVersion: null,
    manifestVersion: null,
    changed: parts.flatMap((s) => s.changed),
    pendingShards: total((s) => s.pendingShards),
    passPending: parts.some((s) => s.passPending),
    converged: parts.every((s) => s.converged),
    snapshotsDeleted: total((s) => s.snapshotsDeleted),
    failed: parts.flatMap((s) => s.failed),
    ...(errors.length > 0 ? { error: errors.join("; ") } : {}),
  };
}
