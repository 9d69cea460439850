/**
 * The regeneration (cron, or POST /sitemap-admin/regenerate): brings a site's pre-rendered
 * snapshots and manifest up to date with its records, doing only what changed, within a bounded
 * amount of work per run, and safe to kill at any point. See docs/regeneration.md.
 *
 * One run:
 *  1. takes the site's lease (lease.ts);
 *  2. finds and renders what changed: from the change feed (incremental.ts) or by re-planning
 *     from the key rows (walk.ts), rendering each shard from one pass over its rows (run.ts);
 *  3. publishes the index snapshot, then the manifest — the switch — and only then saves its
 *     cursor and the work left (publish.ts); a document whose snapshot failed is published
 *     without one (live render) and retried later (failures.ts);
 *  4. collects superseded snapshots (snapshot-gc.ts) and tells shared caches what changed
 *     (purge.ts);
 *  5. logs and keeps its summary (summary.ts).
 *
 * What the work bound leaves is persisted (shards to redo, or where a site pass resumes) and the
 * next run continues.
 */
import { BLOCK_CODEC } from "../core/block-plan.ts";
import { buildManifest } from "../manifest/build.ts";
import { listedShards } from "../manifest/manifest.ts";
import { manifestBuildOptions } from "../sitemaps.ts";
import type { RegenDeps } from "./deps.ts";
import { nextFailures, waiting } from "./failures.ts";
import { incremental } from "./incremental.ts";
import { acquireLease } from "./lease.ts";
import { ManifestDraft } from "./manifest-draft.ts";
import { changedShards, publish } from "./publish.ts";
import { type OnPublished, announcePublished } from "./purge.ts";
import { Run } from "./run.ts";
import { collectSnapshots } from "./snapshot-gc.ts";
import type { Lease } from "./store.ts";
import { type RunSummary, countInto, logSummary, newSummary } from "./summary.ts";
import { walk } from "./walk.ts";

interface RegenOptions {
  /** What started the run (logged): "cron", "admin", … */
  trigger?: string;
  /** Re-plan and re-render every shard (a site pass), ignoring what the change feed says. */
  full?: boolean;
  /** Clock (ms). */
  now?: () => number;
  /** After a publish: the Cache-Tags of the documents that changed (to purge shared caches). */
  onPublished?: OnPublished;
  /** What the invocation has used so far (a queue job counts it at the bindings), kept in the summary. */
  usage?: () => RunSummary["usage"];
  /** The lease's name (a job's chain): a lease of the same name is this run's own (a killed step's retry takes it back). */
  leaseId?: string;
  /** When the run stops taking on work (ms, wall clock): the job step's time budget; what is left is persisted for the next run. */
  deadline?: number;
}

/** Regenerates one site. Throws RegenBusyError when another run holds the site's lease. */
export async function regenerateSite(deps: RegenDeps, origin: string, options: RegenOptions = {}): Promise<RunSummary> {
  const clock = options.now ?? Date.now;
  const startedAt = clock();
  const lease = await acquireLease(deps.state, origin, startedAt, options.leaseId);
  const summary = newSummary(origin, options.trigger ?? "manual", startedAt);
  const progress: { run?: Run } = {};
  try {
    await runOnce(deps, origin, options, startedAt, lease, summary, progress);
    summary.durationMs = clock() - startedAt;
    if (options.usage) summary.usage = options.usage();
    logSummary(summary);
    await deps.state.recordRun(origin, startedAt, true, summary);
    return summary;
  } catch (err) {
    summary.error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (progress.run) countInto(summary, progress.run.counters);
    summary.durationMs = clock() - startedAt;
    if (options.usage) summary.usage = options.usage();
    logSummary(summary);
    await deps.state.recordRun(origin, startedAt, false, summary).catch(() => undefined);
    throw err;
  } finally {
    await deps.state.release(origin, lease).catch(() => undefined);
  }
}

function planFingerprint(build: { renderFingerprint: string; indexFingerprint: string; maxUrls: number; maxBytes: number }): string {
  // The codec too: a site stored in another form is re-rendered whole once (every version rolls over).
  return `${build.renderFingerprint}|${BLOCK_CODEC}|${build.indexFingerprint}|${build.maxUrls}|${build.maxBytes}`;
}

async function runOnce(
  deps: RegenDeps,
  origin: string,
  options: RegenOptions,
  now: number,
  lease: Lease,
  summary: RunSummary,
  progress: { run?: Run },
): Promise<void> {
  const { store } = deps;
  const state = await deps.state.load(origin);
  const published = await deps.manifests.load(origin);
  summary.previousVersion = published?.version ?? null;
  const build = manifestBuildOptions(deps.config, origin);
  const fingerprint = planFingerprint(build);
  const bounds = { ...(options.deadline === undefined ? {} : { deadline: options.deadline }), ...(options.usage ? { usage: options.usage } : {}) };

  let run: Run;
  if (store.changes.indexed && store.scan !== null) {
    run = new Run(deps, origin, now, published, new ManifestDraft(published?.shards ?? []), bounds);
    progress.run = run;
    await incremental(run, store.changes, store.scan, state, fingerprint, options.full ?? false, summary);
  } else {
    // A change feed that walks the site (KV) or no range scan: re-plan by walking the key rows
    // (one index pass), then render the shards whose version has no snapshot yet.
    summary.mode = "walk";
    const planned = await buildManifest(store.reader, origin, published, { ...build, now });
    run = new Run(deps, origin, now, published, new ManifestDraft(planned.shards), bounds);
    progress.run = run;
    await walk(run, (entry) => waiting(state.failed, `${entry.section}-${entry.n}`, now));
    state.fingerprint = fingerprint;
  }

  const { manifest, switched } = await publish(run, build, summary, lease);
  state.failed = nextFailures(state.failed, run.failures, manifest, now);
  if (!(await deps.state.save(origin, lease, { ...state, fingerprint: state.fingerprint }, now))) {
    throw new Error("lost the regeneration lease before saving progress (the run took longer than the lease)");
  }
  summary.changed = changedShards(published, manifest);
  summary.snapshotsDeleted = await collectSnapshots(run, manifest);
  if (switched) await announcePublished(options.onPublished, summary, published, manifest);

  countInto(summary, run.counters);
  summary.pendingShards = state.pending.length;
  summary.passPending = state.pass !== null;
  summary.failed = run.failures.map(({ document, error }) => ({ document, error }));
  summary.converged =
    summary.pendingShards === 0 &&
    !summary.passPending &&
    run.failures.length === 0 &&
    (summary.mode === "walk" ? !listedShards(manifest).some((s) => !s.snapshot) : true);
}
