/**
 * Snapshot garbage collection after a publish: confirm what the manifest now references,
 * supersede what it no longer does, and delete what was superseded (or stored and never
 * published) longer than the grace time ago, a bounded number per run.
 */
import type { ShardManifest } from "../manifest/manifest.ts";
import type { Run } from "./run.ts";

/** Snapshots deleted per run (KV operations per invocation are limited to 1,000). */
const GC_PER_RUN = 100;

/** Returns how many snapshots were deleted. */
export async function collectSnapshots(run: Run, manifest: ShardManifest, switched: boolean): Promise<number> {
  const { deps, origin, now, published } = run;
  const handles = [...(manifest.snapshot ? [manifest.snapshot] : []), ...manifest.shards.flatMap((s) => (s.snapshot ? [s.snapshot] : []))];
  // A handle in use keeps every key it owns (deleting a head deletes its parts).
  const referenced = new Set<string>(handles.flatMap((h) => deps.snapshots.ownedKeys(h)));
  if (switched && published) {
    const superseded = [published.snapshot, ...published.shards.map((s) => s.snapshot)].filter((k): k is string => !!k && !referenced.has(k));
    await deps.state.supersede(origin, [...new Set(superseded)], now);
  }
  await deps.state.confirm(run.snapshots.writtenKeys.filter((k) => referenced.has(k)));
  const due = await deps.state.due(origin, now - deps.config.regen.snapshotGraceSeconds * 1000, GC_PER_RUN);
  const doomed = due.filter((k) => !referenced.has(k));
  for (const key of doomed) await deps.snapshots.delete(key);
  await deps.state.forget(due);
  return doomed.length;
}
