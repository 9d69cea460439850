/**
 * Snapshot garbage collection after a publish: confirm what the manifest now references,
 * supersede what it no longer does, and delete what was superseded (or stored and never
 * published) longer than the grace time ago, a bounded number per run.
 */
import type { ShardManifest } from "../manifest/manifest.ts";
import type { Run } from "./run.ts";

/** Snapshots deleted per run (KV operations per invocation are limited to 1,000). */
const GC_PER_RUN = 100;

/** Every KV key the manifest's snapshots own (a handle in use keeps its parts too: deleting a head deletes them). */
function referencedBy(run: Run, manifest: ShardManifest): Set<string> {
  const handles = [...(manifest.snapshot ? [manifest.snapshot] : []), ...manifest.shards.flatMap((s) => (s.snapshot ? [s.snapshot] : []))];
  return new Set<string>(handles.flatMap((h) => run.deps.snapshots.ownedKeys(h)));
}

/**
 * Before the switch: the published manifest's snapshots the new one no longer names become GC
 * candidates. Recorded before the manifest is saved, not after, so a run that dies (or fails a
 * statement) between the save and its GC leaves none of them in KV for good; if the save itself
 * fails they are still named by the current manifest, which every collection checks first.
 */
export async function supersedeBeforeSwitch(run: Run, manifest: ShardManifest): Promise<void> {
  const { deps, origin, now, published } = run;
  if (!published) return;
  const referenced = referencedBy(run, manifest);
  const superseded = [published.snapshot, ...published.shards.map((s) => s.snapshot)].filter((k): k is string => !!k && !referenced.has(k));
  if (superseded.length > 0) await deps.state.supersede(origin, [...new Set(superseded)], now);
}

/** After a publish: confirms the run's stored snapshots the manifest names, and deletes due candidates it does not. Returns how many. */
export async function collectSnapshots(run: Run, manifest: ShardManifest): Promise<number> {
  const { deps, origin, now } = run;
  const referenced = referencedBy(run, manifest);
  await deps.state.confirm(run.snapshots.writtenKeys.filter((k) => referenced.has(k)));
  const due = await deps.state.due(origin, now - deps.config.regen.snapshotGraceSeconds * 1000, GC_PER_RUN);
  const doomed = due.filter((k) => !referenced.has(k));
  for (const key of doomed) await deps.snapshots.delete(key);
  await deps.state.forget(due);
  return doomed.length;
}
