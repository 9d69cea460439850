/**
 * One mirror's share of a cron run (docs/mirror.md). A pass makes what the mirror brought in equal
 * to the remote sitemap (or sitemap index) through a sync scoped to the mirror's source:
 *
 *   conditional GET of the mirrored URL → 304 (or the same ETag): its listed sitemaps are checked
 *   (src/mirror/check.ts); none changed: nothing to do
 *   → start a sync → the document's records (or, for an index, each listed sitemap's) in batches
 *   (src/mirror/document.ts) → commit (the guard; deletions as tombstones) → remember the validators.
 *
 * The position (which document, how many of its records were sent, digests of those) is saved
 * after every batch, so a pass stops at the run's record budget and the next run resumes it —
 * from the start of a document that changed meanwhile. Every request comes out of the budget the
 * caller passes (src/mirror/budget.ts), so a run stops at it and the next goes on. A document that
 * fails (a 5xx, a timeout, bad XML) stops the pass where it is, with the reason in status: a later
 * run asks it again, and the pass goes on. A failure of the pass itself (the guard, an empty
 * input) aborts the sync — nothing of the pass is deleted — and the next run starts the pass
 * again. Any other error (an invocation limit, a store failing) is thrown on, the pass's saved
 * position kept: the job's step fails and is retried, and reaches the dead-letter queue if it goes on failing.
 */
import { SyncEmptyError, SyncGuardError, SyncNotFoundError, SyncStateError } from "../store/errors.ts";
import { OutOfRequests, budgetedFetcher, outOfShare } from "./budget.ts";
import { checkChildren, childChanged } from "./check.ts";
import type { MirrorBudget, MirrorDeps } from "./deps.ts";
import { forceNextPass, listedDigest, readDocument } from "./document.ts";
import { MirrorFailure, scrubbed, shownUrl } from "./failure.ts";
import { type Fetched, fetchSitemap } from "./fetch.ts";
import { PassWrites } from "./pass-writes.ts";
import { siteOfUrl } from "./site.ts";
import { type MirrorChild, type MirrorState, NO_PASS, newMirrorState, noCounts } from "./store.ts";

export type MirrorOutcome = "unchanged" | "in-progress" | "synced" | "failed";

/** Commit chunks per run (each ≤ 1,000 records examined). */
const COMMIT_CHUNKS = 40;
/** Listed sitemaps read from D1 per query while verifying. */
const PAGE = 100;

const mirrorSource = (url: string): string => `mirror:${url}`;

/** What status shows for an error the pass could not handle (its text goes to the logs only). */
const INTERNAL_ERROR = "internal error (see the Worker's logs); the job retries it";

/**
 * One mirror's turn: goes on with its pass (or checks whether the remote changed) until it is done
 * or `budget` is spent, taking from `budget` what it uses (requests sent to the remote, records
 * read). The caller may call it again in the same run with more budget (`now` the same).
 */
export async function runMirror(deps: MirrorDeps, url: string, budget: MirrorBudget, now = Date.now()): Promise<MirrorOutcome> {
  const fetcher = deps.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const counted: MirrorDeps = { ...deps, fetch: budgetedFetcher(fetcher, budget) };
  const state = (await deps.state.load(url)) ?? newMirrorState(url);
  state.checkedAt = now;
  try {
    return await step(counted, state, budget, now);
  } catch (err) {
    if (err instanceof OutOfRequests) {
      // A redirect hop past the budget: the position saved last stands; a later run goes on from it.
      const saved = (await deps.state.load(url)) ?? state;
      await deps.state.save({ ...saved, checkedAt: now });
      return "in-progress";
    }
    if (err instanceof MirrorFailure && state.syncId !== null) {
      // One document failed: the pass keeps what it read and where it is (saved after each batch,
      // not what this run read since); a later run asks that document again.
      const saved = (await deps.state.load(url)) ?? state;
      await deps.state.save({ ...saved, checkedAt: now, error: scrubbed(err.message, url), errorAt: now });
      return "failed";
    }
    const known = [MirrorFailure, SyncGuardError, SyncEmptyError, SyncNotFoundError, SyncStateError].some((type) => err instanceof type);
    if (!known) {
      // An error the pass cannot handle (a limit of the invocation, a store failing): never
      // swallowed. The pass keeps its saved position; status says what happened if it still can
      // be written; the step fails, so the job retries and, failing on, reaches the dead-letter queue.
      // The error may quote the URL (a fetch error, a stack): never its query.
      console.error("mirror failed", shownUrl(url), scrubbed(err instanceof Error ? (err.stack ?? err.message) : String(err), url));
      const saved = await deps.state.load(url).catch(() => null);
      await deps.state.save({ ...(saved ?? state), checkedAt: now, error: INTERNAL_ERROR, errorAt: now }).catch(() => undefined);
      throw err;
    }
    const reason =
      err instanceof SyncGuardError
        ? `this pass would delete ${err.wouldDelete} of the ${err.inScope} records the mirror brought in; MIRROR_MAX_DELETE allows ${Math.round(err.maxDelete * 100)}%: nothing was deleted, the last good state is served`
        : err instanceof SyncEmptyError
          ? "the remote lists no record this mirror may write (none, or each one rejected or on another site): nothing was deleted, the last good state is served"
          : err instanceof MirrorFailure
            ? scrubbed(err.message, url)
            : "the pass's sync expired or was ended; the next run starts over";
    if (state.syncId !== null) {
      await deps.sync.abort(state.syncId).catch(() => undefined);
      // What this pass read of the listed sitemaps was never committed: the next check must not take them as done.
      await deps.state.forgetChildReads(url).catch(() => undefined);
    }
    // With no pass, a failed check of the listed sitemaps is asked again where it stopped.
    const checkChild = state.syncId === null ? state.checkChild : 0;
    await deps.state.save({ ...endPass(state), checkChild, error: reason, errorAt: now });
    return "failed";
  }
}

/** The state without a pass under way (validators and times kept). */
function endPass(state: MirrorState): MirrorState {
  return { ...state, ...NO_PASS };
}

/** Moves the pass on to its next document, and saves it. */
async function nextDocument(deps: MirrorDeps, state: MirrorState): Promise<void> {
  movedOn(state);
  await deps.state.save(state);
}

/** The state at the start of the pass's next document (the one that failed last, if any, has been read: its error goes). */
function movedOn(state: MirrorState): void {
  Object.assign(state, { child: state.child + 1, recordsDone: 0, prefix: null, error: null, errorAt: null });
}

/** Whether the budget allows starting a document: a request to fetch it, and a record to read. */
const canRead = (budget: MirrorBudget): boolean => budget.requests > 0 && budget.records > 0 && !outOfShare(budget);

/**
 * Reads the pass's documents in order from where it is: the mirrored one (-1), then each sitemap
 * its index lists, their records and reads written together (src/mirror/pass-writes.ts), and
 * written before it returns. false: the run's budget ran out first.
 */
async function readAll(deps: MirrorDeps, state: MirrorState, first: Fetched | null, budget: MirrorBudget, now: number): Promise<boolean> {
  let answer = first;
  const writes = new PassWrites();
  // The listed sitemaps ahead, read from D1 a page at a time.
  let ahead: MirrorChild[] = [];
  for (;;) {
    if (state.child >= 0 && ahead.length === 0) ahead = await deps.state.children(state.url, state.child, PAGE);
    const child = state.child < 0 ? null : (ahead.shift() ?? null);
    if (state.child >= 0 && child === null) {
      await writes.flush(deps, state);
      return true;
    }
    if (budget.records <= 0 || (answer === null && budget.requests <= 0)) {
      if (answer?.status === 200) await answer.cancel();
      await writes.flush(deps, state);
      return false;
    }
    const read = await readDocument(deps, state, child?.url ?? state.url, answer, budget, writes);
    answer = null;
    if (!read.finished) return false;
    if (child === null) {
      await deps.state.setChildren(state.url, read.children);
      state.topReadAt = now;
      state.childrenDigest = read.childrenDigest;
      movedOn(state);
      await writes.flush(deps, state);
    } else {
      writes.reads.push({ n: state.child, validators: read.validators, digest: read.digest, readAt: now });
      movedOn(state);
      if (writes.full) await writes.flush(deps, state);
    }
  }
}

/**
 * Before the commit: every document the pass read is checked again, and one that changed since is
 * read again, so a URL that moved from a sitemap not yet read to one already read is not deleted.
 * The checks go on over runs from a saved cursor (`child` with `verifying` on), within the run's
 * requests: every check comes after the last first read of any document, which is what makes a
 * URL moved at any time since seen by one of the reads (docs/mirror.md). If the index lists other
 * sitemaps now, the pass reads it all again (false, with `verifying` off). false with `verifying`
 * on: the run's budget ran out.
 */
async function verifyAll(deps: MirrorDeps, state: MirrorState, budget: MirrorBudget, now: number): Promise<boolean> {
  for (;;) {
    if (state.child < 0) {
      if (state.topReadAt !== now && state.childrenDigest !== null) {
        if (budget.requests <= 0) return false;
        if (await listChanged(deps, state)) {
          Object.assign(state, { verifying: false, child: -1, recordsDone: 0, prefix: null });
          state.counts.restarts += 1;
          forceNextPass(state);
          await deps.state.save(state);
          return false;
        }
      }
      await nextDocument(deps, state);
      continue;
    }
    // recordsDone > 0: reading a changed document again is under way.
    if (state.recordsDone > 0) {
      const child = await deps.state.child(state.url, state.child);
      if (child === null) return true;
      if (!(await readAgain(deps, state, child.url, budget, now))) return false;
      continue;
    }
    const page = await deps.state.children(state.url, state.child, PAGE);
    if (page.length === 0) return true;
    for (const child of page) {
      // Read in this very run: nothing to ask again.
      if (child.readAt === now) {
        state.child += 1;
        continue;
      }
      // Two requests and a record: the check, and reading it again should it have changed.
      if (budget.requests < 2 || budget.records <= 0) {
        await deps.state.save(state);
        return false;
      }
      if (!(await childChanged(deps, state.url, state.child, child))) {
        state.child += 1;
        continue;
      }
      state.counts.restarts += 1;
      forceNextPass(state);
      if (!(await readAgain(deps, state, child.url, budget, now))) return false;
      break; // the cursor moved on: read the next page from it
    }
    await deps.state.save(state);
  }
}

/** Reads the pass's current document again, from its saved position; false: the budget ran out first. */
async function readAgain(deps: MirrorDeps, state: MirrorState, url: string, budget: MirrorBudget, now: number): Promise<boolean> {
  if (!canRead(budget)) {
    await deps.state.save(state);
    return false;
  }
  const writes = new PassWrites();
  const read = await readDocument(deps, state, url, null, budget, writes);
  if (!read.finished) return false;
  writes.reads.push({ n: state.child, validators: read.validators, digest: read.digest, readAt: now });
  movedOn(state);
  await writes.flush(deps, state);
  return true;
}

/** Whether the mirrored index lists other sitemaps than when the pass read it. */
async function listChanged(deps: MirrorDeps, state: MirrorState): Promise<boolean> {
  const limits = { timeoutMs: deps.config.mirror.timeoutMs, maxBytes: deps.config.mirror.maxBytes };
  const validators = { etag: state.passEtag, lastModified: state.passLastModified };
  const answer = await fetchSitemap(state.url, validators.etag !== null || validators.lastModified !== null ? validators : null, limits, deps.fetch);
  if (answer.status === 304) return false;
  if (answer.validators.etag !== null && answer.validators.etag === state.passEtag) {
    await answer.cancel();
    return false;
  }
  return (await listedDigest(answer.text, state.url)) !== state.childrenDigest;
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
    if (!canRead(budget)) return "in-progress";
    first = await fetchSitemap(state.url, { etag: state.etag, lastModified: state.lastModified }, limits, deps.fetch);
    if (first.status === 304 || (first.validators.etag !== null && first.validators.etag === state.etag)) {
      if (first.status === 200) await first.cancel();
      const children = await checkChildren(deps, state, budget);
      if (children !== "changed" || !canRead(budget)) {
        await deps.state.save({ ...state, error: null, errorAt: null });
        // Checks left for a later turn or run (a changed sitemap found without budget left is found again).
        return children === "unchanged" ? "unchanged" : "in-progress";
      }
      // A listed sitemap changed under an unchanged index: a whole pass, from the index.
      first = await fetchSitemap(state.url, null, limits, deps.fetch);
    }
    state.site = siteOfUrl(state.url, config.sites) ?? state.site;
    const site = state.site !== null && config.sites.has(state.site) ? state.site : null;
    const sync = await deps.sync.start(
      // The mirror's one site when known: its deletions, and the commit's walk, stay within it.
      { sites: site === null ? [...config.sites] : [site], section: null, source: mirrorSource(state.url) },
      { maxDelete: config.mirror.maxDelete, ttlMs: config.syncTtlMs },
      now,
    );
    Object.assign(state, {
      ...NO_PASS,
      syncId: sync.id,
      passEtag: first.status === 200 ? first.validators.etag : null,
      passLastModified: first.status === 200 ? first.validators.lastModified : null,
      counts: noCounts(),
      error: null,
      errorAt: null,
    });
    await deps.state.save(state);
  }
  const syncId = state.syncId!;
  const sync = await deps.sync.get(syncId);
  if (sync?.state !== "committing") {
    for (;;) {
      if (!state.verifying) {
        if (!(await readAll(deps, state, first, budget, now))) return "in-progress";
        Object.assign(state, { verifying: true, child: -1, recordsDone: 0, prefix: null });
        await deps.state.save(state);
      }
      first = null;
      if (await verifyAll(deps, state, budget, now)) break;
      // Out of budget, or the index lists other sitemaps now and the pass reads it all again.
      if (state.verifying) return "in-progress";
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
