/**
 * The sitemaps of an unchanged index (docs/mirror.md "An unchanged index"). A CMS's index often
 * keeps its ETag, or answers 304, while one of the sitemaps it lists changes: so each listed
 * sitemap is asked too, conditionally by the validators it had when the last pass read it, and a
 * 200 is compared by the digest of its entries (validators can be missing, or change with nothing
 * else). The first one that changed means a new pass. The requests come out of the run's budget
 * (src/mirror/budget.ts); the next run goes on from where this one stopped.
 */
import type { MirrorBudget, MirrorDeps } from "./deps.ts";
import { fetchSitemap } from "./fetch.ts";
import { contentDigest } from "./read.ts";
import type { MirrorChild, MirrorState } from "./store.ts";

/** Listed sitemaps read from D1 per query. */
const PAGE = 100;

export type ChildrenCheck = "unchanged" | "changed" | "unfinished";

export async function checkChildren(deps: MirrorDeps, state: MirrorState, budget: MirrorBudget): Promise<ChildrenCheck> {
  for (;;) {
    const page = await deps.state.children(state.url, state.checkChild, PAGE);
    if (page.length === 0) {
      state.checkChild = 0;
      return "unchanged";
    }
    for (const child of page) {
      // Not read whole by a finished pass (new, or the last pass failed after reading it).
      if (child.digest === null) return "changed";
      if (budget.requests <= 0) return "unfinished";
      if (await childChanged(deps, state.url, state.checkChild, child)) return "changed";
      state.checkChild += 1;
    }
    // Kept as it goes: a run cut short (the cron's time limit) does not ask the same sitemaps again.
    await deps.state.save(state);
  }
}

/**
 * Whether the n-th sitemap of the index at `indexUrl` changed since it was read: a conditional GET
 * by its validators, then the same ETag, then the digest of its entries. New validators over the
 * same entries are remembered, so the next check is a 304.
 */
export async function childChanged(deps: MirrorDeps, indexUrl: string, n: number, child: MirrorChild): Promise<boolean> {
  if (child.digest === null) return true;
  const limits = { timeoutMs: deps.config.mirror.timeoutMs, maxBytes: deps.config.mirror.maxBytes };
  const { etag, lastModified } = child.validators;
  const answer = await fetchSitemap(child.url, etag !== null || lastModified !== null ? child.validators : null, limits, deps.fetch);
  if (answer.status === 304) return false;
  if (answer.validators.etag !== null && answer.validators.etag === etag) {
    await answer.cancel();
    return false;
  }
  const digest = await contentDigest(answer.text, child.url);
  if (digest !== child.digest) return true;
  await deps.state.setChildRead(indexUrl, n, answer.validators, digest, child.readAt ?? 0);
  return false;
}
