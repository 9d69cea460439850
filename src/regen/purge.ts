/**
 * After a publish: tell shared caches which documents changed. The tiered Workers Cache is purged
 * by Cache-Tag when it is on (`ctx.cache`, docs/caching.md); the per-location Cache API needs
 * nothing, its keys carry the version.
 */
import { indexCacheTag, shardCacheTag, siteCacheTag } from "../documents/cache-tags.ts";
import type { ShardManifest } from "../manifest/manifest.ts";
import type { RunSummary } from "./summary.ts";

/** The documents a publish changed. */
export type OnPublished = (tags: { index: boolean; shards: { section: string; n: number }[] }) => Promise<void> | void;

/** Calls `onPublished` with what changed, when anything did. */
export async function announcePublished(
  onPublished: OnPublished | undefined,
  summary: RunSummary,
  stored: ShardManifest | null,
  published: ShardManifest,
): Promise<void> {
  if (!onPublished || summary.changed.length + (summary.indexRendered ? 1 : 0) === 0) return;
  const shards = summary.changed.map((name) => {
    const cut = name.lastIndexOf("-");
    return { section: name.slice(0, cut), n: Number(name.slice(cut + 1)) };
  });
  await onPublished({ index: stored?.snapshot !== published.snapshot, shards });
}

interface PurgeableContext {
  cache?: { purge?: (options: { tags: string[] }) => Promise<unknown> };
}

/** Purges the changed documents' Cache-Tags from the tiered Workers Cache when `ctx.cache` has it. */
export function purgeChanged(ctx: unknown, origin: string): OnPublished | undefined {
  const purge = (ctx as PurgeableContext | undefined)?.cache?.purge;
  if (typeof purge !== "function") return undefined;
  return async (changed) => {
    const tags = [...(changed.index ? [indexCacheTag(origin)] : []), ...changed.shards.map((s) => shardCacheTag(origin, s.section, s.n))];
    // Any change re-lists the index (its lastmod moved), so purge it with the shards.
    if (tags.length > 0 && !changed.index) tags.push(indexCacheTag(origin));
    for (let i = 0; i < tags.length; i += 100) {
      await purge
        .call((ctx as PurgeableContext).cache, { tags: tags.slice(i, i + 100) })
        .catch((err: unknown) => console.error("cache purge failed", err));
    }
  };
}

/**
 * Purges every document of a deleted site (its Cache-Tag `sitemaps/<host>`) from the tiered Workers
 * Cache when `ctx.cache` has it, so a new tenant later registered at its origin is not answered the
 * deleted site's documents there (src/jobs/site-purge.ts, docs/tenants.md). false when there is no
 * such cache or its purge failed (logged, as a publish's: the documents then expire with their
 * s-maxage, as in any cache further out; the site's purge is not held up by it).
 */
export async function purgeSiteDocuments(ctx: unknown, origin: string): Promise<boolean> {
  const cache = (ctx as PurgeableContext | undefined)?.cache;
  if (typeof cache?.purge !== "function") return false;
  try {
    await cache.purge.call(cache, { tags: [siteCacheTag(origin)] });
    return true;
  } catch (err) {
    console.error("cache purge of a deleted site failed", err);
    return false;
  }
}
