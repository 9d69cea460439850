/**
 * Publishing a run: the index snapshot first, then the manifest with one write — the switch.
 * A run killed before the switch leaves the previous manifest and every snapshot it names untouched.
 */
import type { BuildOptions } from "../manifest/build.ts";
import { type ShardEntry, type ShardManifest, listedShards, manifestVersion } from "../manifest/manifest.ts";
import { indexExtras, indexMeta, renderIndex } from "../sitemaps.ts";
import { describeError } from "./failures.ts";
import type { Run } from "./run.ts";
import { supersedeBeforeSwitch } from "./snapshot-gc.ts";
import type { Lease } from "./store.ts";
import type { RunSummary } from "./summary.ts";

interface Published {
  manifest: ShardManifest;
  /** The manifest was saved (anything differs from the one published before). */
  switched: boolean;
}

function sameShards(a: readonly ShardEntry[], b: readonly ShardEntry[]): boolean {
  if (a.length !== b.length) return false;
  const key = (s: ShardEntry): string =>
    [s.section, s.n, s.firstKey, s.lastKey, s.urlCount, s.byteCount, s.lastChange, s.version, s.extKinds ?? 0, s.snapshot ?? ""].join("\u0000");
  const left = a.map(key).sort();
  const right = b.map(key).sort();
  return left.every((k, i) => k === right[i]);
}

/**
 * Renders and stores the index when its version is new, then saves the manifest when anything
 * changed. An index that could not be stored is published without a snapshot (served live).
 *
 * A site pass that began with no complete manifest (a site's first) and has not reached the end of
 * the rows publishes a partial manifest (`partial`): the shards planned so far, so that the next
 * run goes on from them, but no index, which requests do not serve until the pass has ended
 * (src/sitemaps.ts `currentManifest`). `summary.passPending` says whether the pass goes on (incremental.ts).
 */
export async function publish(run: Run, build: BuildOptions, summary: RunSummary, lease: Lease): Promise<Published> {
  const { deps, origin, now, published } = run;
  const shards = run.draft.all();
  const version = manifestVersion(shards, build.indexFingerprint);
  const partial = summary.passPending && (published === null || published.partial === true);
  const manifest: ShardManifest = { origin, version, builtAt: now, snapshot: null, shards, ...(partial ? { partial } : {}) };
  let indexHandle: string | null = null;
  if (listedShards(manifest).length > 0 && !partial) {
    const extras = await indexExtras(deps, manifest, now);
    const meta = indexMeta(manifest, extras);
    const document = { kind: "index", origin, version: meta.version } as const;
    // The published index snapshot is kept when it holds this version.
    if (published?.snapshot && run.snapshots.holds(published.snapshot, document)) {
      indexHandle = published.snapshot;
    } else {
      try {
        indexHandle = await run.snapshots.commit(document, await run.snapshots.stage(renderIndex(deps.config, manifest, extras)));
        summary.indexRendered = true;
      } catch (err) {
        run.failures.push({ document: "index", section: null, key: 0, error: describeError(err) });
      }
    }
  }
  manifest.snapshot = indexHandle;
  const switched =
    !published ||
    published.version !== version ||
    published.snapshot !== indexHandle ||
    (published.partial ?? false) !== partial ||
    !sameShards(published.shards, shards);
  if (switched) {
    await supersedeBeforeSwitch(run, manifest);
    await deps.manifests.save(manifest, { leaseId: lease.id });
    summary.published = true;
  }
  summary.manifestVersion = manifest.version;
  return { manifest, switched };
}

/** `section-n` of every listed shard whose version changed, or that is new or gone, sorted. */
export function changedShards(before: ShardManifest | null, after: ShardManifest): string[] {
  const old = new Map((before?.shards ?? []).filter((s) => s.urlCount > 0).map((s) => [`${s.section}-${s.n}`, s.version]));
  const now = new Map(listedShards(after).map((s) => [`${s.section}-${s.n}`, s.version]));
  const changed: string[] = [];
  for (const [name, v] of now) if (old.get(name) !== v) changed.push(name);
  for (const name of old.keys()) if (!now.has(name)) changed.push(name);
  return changed.sort();
}
