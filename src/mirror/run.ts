/**
 * One mirror's share of a cron run (docs/mirror.md). A pass makes what the mirror brought in equal
 * to the remote sitemap (or sitemap index) through a sync scoped to the mirror's source:
 *
 *   conditional GET of the mirrored URL → 304 (or the same ETag): nothing to do
 *   → start a sync → the document's records (or, for an index, each listed sitemap's) in batches
 *   → commit (the guard; deletions as tombstones) → remember the validators.
 *
 * The position (which document, how many of its records were sent) is saved after every batch, so
 * a pass stops at the run's record budget and the next run resumes it. Any failure aborts the
 * sync — nothing of the pass is deleted — and is kept for /sitemap-admin/status; the next run
 * starts the pass again.
 */
import type { Config } from "../config.ts";
import type { ValidRecord, ValidationContext } from "../core/validate.ts";
import { SyncGuardError, SyncNotFoundError, SyncStateError } from "../store/errors.ts";
import type { RecordSync } from "../store/port.ts";
import { MirrorFailure, shownUrl } from "./failure.ts";
import { type Fetched, fetchSitemap } from "./fetch.ts";
import { sitemapItems } from "./read.ts";
import { mirroredRecord } from "./records.ts";
import { type MirrorState, type MirrorStateStore, newMirrorState, noCounts } from "./store.ts";

export interface MirrorDeps {
  config: Config;
  sync: RecordSync;
  state: MirrorStateStore;
}

/** Records a cron run may still read, shared by every mirror of the run. */
export interface MirrorBudget {
  records: number;
}

export type MirrorOutcome = "unchanged" | "in-progress" | "synced" | "failed";

/** Records per sync batch. */
const BATCH = 500;
/** Commit chunks per run (each ≤ 1,000 records examined). */
const COMMIT_CHUNKS = 40;
/** Sitemaps one index may list (sitemaps.org). */
const MAX_CHILDREN = 50_000;

const mirrorSource = (url: string): string => `mirror:${url}`;

export async function runMirror(deps: MirrorDeps, url: string, budget: MirrorBudget, now = Date.now()): Promise<MirrorOutcome> {
  const state = (await deps.state.load(url)) ?? newMirrorState(url);
  state.checkedAt = now;
  try {
    return await step(deps, state, budget, now);
  } catch (err) {
    if (!(err instanceof MirrorFailure || err instanceof SyncGuardError || err instanceof SyncNotFoundError || err instanceof SyncStateError)) {
      console.error("mirror failed", shownUrl(url), err);
    }
    const reason =
      err instanceof SyncGuardError
        ? `this pass would delete ${err.wouldDelete} of the ${err.inScope} records the mirror brought in; MIRROR_MAX_DELETE allows ${Math.round(err.maxDelete * 100)}%: nothing was deleted, the last good state is served`
        : err instanceof MirrorFailure
          ? err.message
          : err instanceof SyncNotFoundError || err instanceof SyncStateError
            ? "the pass's sync expired or was ended; the next run starts over"
            : "internal error (see the Worker's logs)";
    if (state.syncId !== null) await deps.sync.abort(state.syncId).catch(() => undefined);
    await deps.state.save({ ...endPass(state), error: reason, errorAt: now });
    return "failed";
  }
}

/** The state without a pass under way (validators and times kept). */
function endPass(state: MirrorState): MirrorState {
  return { ...state, syncId: null, passEtag: null, passLastModified: null, child: -1, recordsDone: 0 };
}

async function step(deps: MirrorDeps, state: MirrorState, budget: MirrorBudget, now: number): Promise<MirrorOutcome> {
  const { config } = deps;
  const limits = { timeoutMs: config.mirror.timeoutMs, maxBytes: config.mirror.maxBytes };
  let first: Fetched | null = null;
  if (state.syncId !== null) {
    const sync = await deps.sync.get(state.syncId);
    if (sync === null || sync.state === "aborted") Object.assign(state, endPass(state));
  }
  if (state.syncId === null) {
    if (budget.records <= 0) return "in-progress";
    first = await fetchSitemap(state.url, { etag: state.etag, lastModified: state.lastModified }, limits);
    if (first.status === 304 || (first.validators.etag !== null && first.validators.etag === state.etag)) {
      if (first.status === 200) await first.cancel();
      await deps.state.save({ ...state, error: null, errorAt: null });
      return "unchanged";
    }
    const sync = await deps.sync.start(
      { sites: [...config.sites], section: null, source: mirrorSource(state.url) },
      { maxDelete: config.mirror.maxDelete, ttlMs: config.syncTtlMs },
      now,
    );
    Object.assign(state, {
      syncId: sync.id,
      passEtag: first.validators.etag,
      passLastModified: first.validators.lastModified,
      child: -1,
      recordsDone: 0,
      counts: noCounts(),
      error: null,
      errorAt: null,
    });
    await deps.state.save(state);
  }
  const syncId = state.syncId!;
  const sync = await deps.sync.get(syncId);
  if (sync?.state !== "committing") {
    // Documents in order: the mirrored one (-1), then each sitemap its index lists.
    for (;;) {
      const url = state.child < 0 ? state.url : await deps.state.child(state.url, state.child);
      if (url === null) break;
      const fetched = first ?? (await fetchSitemap(url, null, limits));
      first = null;
      if (fetched.status !== 200) throw new MirrorFailure(`${shownUrl(url)} answered 304 to an unconditional request`);
      const finished = await sendDocument(deps, state, url, fetched, budget);
      if (!finished) {
        await fetched.cancel();
        return "in-progress";
      }
      state.child += 1;
      state.recordsDone = 0;
      await deps.state.save(state);
    }
  }
  const committed = await deps.sync.commit(syncId, { maxChunks: COMMIT_CHUNKS }, now);
  if (!committed.done) {
    await deps.state.save(state);
    return "in-progress";
  }
  const c = committed.sync;
  await deps.state.save({
    ...endPass(state),
    etag: state.passEtag,
    lastModified: state.passLastModified,
    counts: { ...state.counts, inserted: c.inserted, updated: c.updated, unchanged: c.unchanged, deleted: c.deleted },
    okAt: now,
    error: null,
    errorAt: null,
  });
  return "synced";
}

/**
 * Sends one document's records under the pass's sync, from where an earlier run stopped; for the
 * mirrored document itself, also records the sitemaps it lists (an index). false: the run's
 * budget ran out first (the position is saved).
 */
async function sendDocument(
  deps: MirrorDeps,
  state: MirrorState,
  url: string,
  fetched: Fetched & { status: 200 },
  budget: MirrorBudget,
): Promise<boolean> {
  const { config } = deps;
  const top = state.child < 0;
  const host = new URL(state.url).host;
  const ctx: ValidationContext = { sites: config.sites, defaultSection: config.defaultSection, sectionRules: config.sectionRules };
  const children: string[] = [];
  let batch = new Map<string, ValidRecord>();
  let seen = 0;
  const flush = async (upTo: number): Promise<void> => {
    if (batch.size > 0) await deps.sync.upsert(state.syncId!, [...batch.values()]);
    batch = new Map();
    state.recordsDone = upTo;
    await deps.state.save(state);
  };
  for await (const item of sitemapItems(fetched.text, url)) {
    if (item.kind === "sitemap") {
      // Only the mirrored document may be an index, and it leads only to its own host.
      let child: URL | null = null;
      try {
        child = new URL(item.loc, url);
      } catch {
        child = null;
      }
      if (!top || child === null || child.host !== host || (child.protocol !== "https:" && child.protocol !== "http:")) {
        state.counts.rejected += 1;
        continue;
      }
      if (children.length >= MAX_CHILDREN) throw new MirrorFailure(`${shownUrl(url)} lists more than ${MAX_CHILDREN} sitemaps`);
      children.push(child.href);
      continue;
    }
    const n = ++seen;
    if (n <= state.recordsDone) continue; // sent by an earlier run of this pass
    if (budget.records <= 0) {
      await flush(n - 1);
      return false;
    }
    budget.records -= 1;
    state.counts.records += 1;
    const mirrored = item.error === undefined ? mirroredRecord(item.input, ctx) : { record: null, dropped: 0 };
    state.counts.dropped += mirrored.dropped;
    if (mirrored.record === null) state.counts.rejected += 1;
    else batch.set(mirrored.record.loc, mirrored.record);
    if (batch.size >= BATCH) await flush(n);
  }
  await flush(seen);
  if (top) await deps.state.setChildren(state.url, children);
  return true;
}
