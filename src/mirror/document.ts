/**
 * Reading one document of a mirror pass (docs/mirror.md "A pass that spans runs"): its records go
 * to the pass's sync in batches, from where an earlier run of the pass stopped.
 *
 * An earlier run's position is a count, and a count means nothing over a document that changed:
 * skipping the first 100 records of a sitemap that dropped its first URL would skip one nobody
 * sent, and the commit would delete it. So the skipped part is read again and its locs digested;
 * only if they are the locs that were sent is the rest read from there. Otherwise the document is
 * read again from its start, within this pass. Every document of a pass is so read whole, as one
 * version, before anything is deleted.
 */
import type { ValidationContext } from "../core/validate.ts";
import { outOfShare } from "./budget.ts";
import type { MirrorBudget, MirrorDeps } from "./deps.ts";
import { SequenceDigest } from "./digest.ts";
import { MirrorFailure, shownUrl } from "./failure.ts";
import { type Fetched, fetchSitemap } from "./fetch.ts";
import type { PassWrites } from "./pass-writes.ts";
import { entryText, locText, sitemapItems } from "./read.ts";
import { mirroredRecord } from "./records.ts";
import type { MirrorState, Validators } from "./store.ts";

/** Sitemaps one index may list (sitemaps.org). */
const MAX_CHILDREN = 50_000;

export type DocumentRead =
  /**
   * Read whole: the validators and content digest of the version read; for the mirrored document,
   * the sitemaps it lists and their digest (null: it lists none, not an index).
   */
  | { finished: true; validators: Validators; digest: string; children: string[]; childrenDigest: string | null }
  /** The run's budget ran out first; the position is saved (what `writes` held written with it). */
  | { finished: false };

type Attempt = DocumentRead | { changed: true };

/**
 * Sends the document at `url` (the pass's current one, `state.child`) from the saved position.
 * `fetched` is its answer when the caller already has one. Its records go into `writes`, flushed
 * (with the position) whenever it is full: read whole, the last of them may still wait there.
 */
export async function readDocument(
  deps: MirrorDeps,
  state: MirrorState,
  url: string,
  fetched: Fetched | null,
  budget: MirrorBudget,
  writes: PassWrites,
): Promise<DocumentRead> {
  const limits = { timeoutMs: deps.config.mirror.timeoutMs, maxBytes: deps.config.mirror.maxBytes };
  let answer = fetched ?? (await fetchSitemap(url, null, limits, deps.fetch));
  for (;;) {
    if (answer.status !== 200) throw new MirrorFailure(`${shownUrl(url)} answered 304 to an unconditional request`);
    const attempt = await sendFrom(deps, state, url, answer, budget, writes);
    if (!("changed" in attempt)) {
      if (!attempt.finished) await answer.cancel();
      return attempt;
    }
    // The part already sent is not what the document now starts with: read it all again. What
    // was sent of the old version stays seen, so this pass deletes less, never more; the next
    // pass (forced: no validators kept) deletes what only the old version listed.
    await answer.cancel();
    state.counts.restarts += 1;
    state.recordsDone = 0;
    state.prefix = null;
    forceNextPass(state);
    // The position is saved only with what waits for it (the sitemaps before this one).
    await writes.flush(deps, state);
    answer = await fetchSitemap(url, null, limits, deps.fetch);
  }
}

/**
 * The pass may have seen URLs that a document it read no longer lists (it read an older version
 * too): so the next conditional GET of the mirrored URL will not be answered 304, and the next run
 * starts a whole new pass, which deletes them.
 */
export function forceNextPass(state: MirrorState): void {
  state.passEtag = null;
  state.passLastModified = null;
}

async function sendFrom(
  deps: MirrorDeps,
  state: MirrorState,
  url: string,
  fetched: Fetched & { status: 200 },
  budget: MirrorBudget,
  writes: PassWrites,
): Promise<Attempt> {
  const { config } = deps;
  const top = state.child < 0;
  const ctx: ValidationContext = { sites: config.sites, defaultSection: config.defaultSection, sectionRules: config.sectionRules };
  const skip = state.recordsDone;
  const locs = new SequenceDigest();
  const content = new SequenceDigest();
  const listed = new SequenceDigest();
  const children: string[] = [];
  let seen = 0;
  /** Writes what waits, the position `upTo` records into this document. */
  const flush = async (upTo: number): Promise<void> => {
    state.recordsDone = upTo;
    state.prefix = upTo === 0 ? null : { locs: await locs.value(), content: await content.value() };
    await writes.flush(deps, state);
  };
  for await (const item of sitemapItems(fetched.text, url)) {
    if (item.kind === "sitemap") {
      await content.add(entryText(item));
      // Only the mirrored document may be an index.
      const child = top ? listedChild(item.loc, state.url) : null;
      if (child === null) {
        state.counts.rejected += 1;
        continue;
      }
      if (children.length >= MAX_CHILDREN) throw new MirrorFailure(`${shownUrl(url)} lists more than ${MAX_CHILDREN} sitemaps`);
      children.push(child);
      await listed.add(child);
      continue;
    }
    const n = ++seen;
    if (n <= skip) {
      // Sent by an earlier run of this pass, if the document still starts the same way.
      await locs.add(locText(item));
      await content.add(entryText(item));
      if (n === skip) {
        if (state.prefix === null || (await locs.value()) !== state.prefix.locs) return { changed: true };
        // Same URLs, other details (a lastmod): skipping loses no URL, but what was sent of them is
        // older than the document; the next pass sends them again.
        if ((await content.value()) !== state.prefix.content) forceNextPass(state);
      }
      continue;
    }
    if (budget.records <= 0 || outOfShare(budget)) {
      await flush(n - 1);
      return { finished: false };
    }
    budget.records -= 1;
    await locs.add(locText(item));
    await content.add(entryText(item));
    state.counts.records += 1;
    const mirrored = mirroredRecord(item.input, ctx, item.error);
    state.counts.dropped += mirrored.dropped;
    if (mirrored.kind === "rejected") state.counts.rejected += 1;
    else {
      const origin = mirrored.kind === "record" ? mirrored.record.origin : mirrored.origin;
      state.site ??= origin;
      if (origin !== state.site) state.counts.foreign += 1;
      else if (mirrored.kind === "record") {
        writes.records.set(mirrored.record.loc, mirrored.record);
        if (mirrored.repaired) state.counts.repaired += 1;
      } else {
        writes.kept.add(mirrored.loc);
        state.counts.repaired += 1;
      }
    }
    if (writes.full) await flush(n);
  }
  // Shorter than the part already sent: it changed.
  if (seen < skip) return { changed: true };
  const childrenDigest = children.length === 0 ? null : await listed.value();
  return { finished: true, validators: fetched.validators, digest: await content.value(), children, childrenDigest };
}

/** A `<sitemap>` loc of the mirrored index → the URL read, or null: it leads only to the index's own host, never from https to http. */
function listedChild(loc: string, indexUrl: string): string | null {
  const index = new URL(indexUrl);
  let child: URL;
  try {
    child = new URL(loc, index);
  } catch {
    return null;
  }
  if (child.protocol !== "https:" && child.protocol !== "http:") return null;
  if (child.host !== index.host || (index.protocol === "https:" && child.protocol !== "https:")) return null;
  return child.href;
}

/** The digest of the sitemaps the mirrored index at `url` lists now (null: none), as a pass's read of it computes it. */
export async function listedDigest(text: AsyncIterable<string>, url: string): Promise<string | null> {
  const listed = new SequenceDigest();
  let any = false;
  for await (const item of sitemapItems(text, url)) {
    const child = item.kind === "sitemap" ? listedChild(item.loc, url) : null;
    if (child === null) continue;
    any = true;
    await listed.add(child);
  }
  return any ? listed.value() : null;
}
