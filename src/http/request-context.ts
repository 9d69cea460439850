/** What document handlers take from a request's Hono context: after-work, serving context, manifest. */
import type { Context } from "hono";
import type { CachedSite } from "../documents/cache-keys.ts";
import { requestManifest, sharedCurrentManifest } from "../manifest/location-cache.ts";
import { type ShardEntry, type ShardManifest, findShard } from "../manifest/manifest.ts";
import type { AppEnv } from "./app-env.ts";
import type { ServeContext } from "./cache/serve.ts";
import { notFound } from "./respond.ts";

export function waitUntilOf(c: Context<AppEnv>): (promise: Promise<unknown>) => void {
  try {
    const ctx = c.executionCtx;
    return (promise) => ctx.waitUntil(promise);
  } catch {
    return (promise) => void promise.catch(() => undefined); // no execution context (app.fetch without one)
  }
}

/** How sitemap documents are served (src/http/cache/serve.ts): this request, config, snapshots, after-work. */
export function serveContext(c: Context<AppEnv>): ServeContext {
  const s = c.var.services;
  return { request: c.req.raw, config: s.config, snapshots: s.snapshots, waitUntil: waitUntilOf(c), registeredAt: s.registeredAt };
}

/** Whose cached entries this request reads and fills (src/documents/cache-keys.ts): its origin and the site's registration. */
export function cachedSite(c: Context<AppEnv>): CachedSite {
  return { origin: c.var.origin, registeredAt: c.var.services.registeredAt };
}

/** The site's manifest for this request: the location's cached copy when fresh (no D1 query). */
export function manifestFor(c: Context<AppEnv>): Promise<ShardManifest> {
  const s = c.var.services;
  return requestManifest(s, cachedSite(c), s.config.cache.manifestTtl, waitUntilOf(c));
}

/**
 * A shard of this request's site with its manifest, or the 404 every shard-shaped document answers.
 * `linked`: the partition count of the link followed (src/partitions/pinned.ts); one above this
 * location's copy of the manifest means an index from after a flip that copy predates: the stored one is read.
 * `emptyToo`: a shard emptied since it was listed is found too (its every URL moved in a flip: an index
 * read before the flip links it, src/http/shard-reading.ts, which answers 404 for it once not pinned).
 */
export async function shardFor(
  c: Context<AppEnv>,
  section: string,
  n: number,
  linked: number | null = null,
  emptyToo = false,
): Promise<{ manifest: ShardManifest; shard: ShardEntry } | Response> {
  let manifest = await manifestFor(c);
  if (linked !== null && manifest.partitions !== undefined && linked > manifest.partitions)
    manifest = await sharedCurrentManifest(c.var.services, c.var.origin);
  const shard = findShard(manifest, section, n, emptyToo);
  return shard ? { manifest, shard } : notFound(`no sitemap ${section}-${n}`);
}
