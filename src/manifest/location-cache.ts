/**
 * The request path's copy of a site's manifest in the per-location Cache API, so that a cache hit
 * costs no D1 query at all. A location trusts its copy for MANIFEST_CACHE_TTL seconds; a manifest
 * saved through the services' store removes the copy here at once (other locations catch up within
 * the TTL). Superseded snapshots outlive the TTL by far (SNAPSHOT_GRACE_SECONDS), so an older
 * manifest never points at deleted bytes.
 *
 * It lives beside the ManifestStore port, not in src/http/: the wiring (src/services.ts) wraps every
 * store in `InvalidatingManifestStore`, and the read and the invalidation must share one key. It
 * uses the Cache API only, never Hono or a request.
 */

import { type CachedSite, cacheKey } from "../documents/cache-keys.ts";
import { type SitemapDeps, currentManifest } from "../sitemaps.ts";
import type { ManifestFence, ManifestStore, ShardManifest } from "./manifest.ts";

/** Bumped when the cached JSON's shape changes. */
const FORMAT = "m1";

/** The copy's key: the site's origin and registration (src/documents/cache-keys.ts). */
function manifestKey(site: CachedSite): string {
  return cacheKey(site, "/sitemap-cache/manifest", "manifest", FORMAT);
}

function edgeCache(): Cache | null {
  // Workers' CacheStorage has `default`; the cast keeps this module type-checking under DOM types too.
  return typeof caches === "undefined" ? null : (caches as unknown as { default: Cache }).default;
}

/**
 * The isolate's builds under way, by origin: requests that find no complete manifest at once share
 * one walk and one save (the site's manifest is one KV key with MANIFEST_STORE=kv, written at most
 * once a second), and one request for the site's regeneration.
 */
const building = new Map<string, Promise<ShardManifest>>();

/**
 * `currentManifest`, its build shared with the requests of this isolate that find none for the same
 * site meanwhile. Each request reads the stored manifest itself: only a build is shared.
 */
export async function sharedCurrentManifest(deps: SitemapDeps, origin: string): Promise<ShardManifest> {
  const stored = await deps.manifests.load(origin);
  if (stored && !stored.partial) return stored;
  const under = building.get(origin);
  if (under) return under;
  const build = currentManifest(deps, origin, stored).finally(() => {
    if (building.get(origin) === build) building.delete(origin);
  });
  building.set(origin, build);
  return build;
}

/**
 * The site's manifest for serving: the location's copy when fresh, else D1 (a small site's built
 * if there is none; a larger site's is built by its regeneration: ManifestPendingError meanwhile).
 */
export async function requestManifest(
  deps: SitemapDeps,
  site: CachedSite,
  ttl: number,
  waitUntil: (promise: Promise<unknown>) => void,
): Promise<ShardManifest> {
  const { origin } = site;
  const cache = ttl > 0 ? edgeCache() : null;
  if (cache) {
    const hit = await cache.match(new Request(manifestKey(site)));
    if (hit) {
      try {
        const manifest = (await hit.json()) as ShardManifest;
        if (manifest.origin === origin && Array.isArray(manifest.shards)) return manifest;
      } catch {
        // unreadable copy: fall through to D1
      }
    }
  }
  const manifest = await sharedCurrentManifest(deps, origin);
  if (cache) {
    const copy = new Response(JSON.stringify(manifest), {
      headers: { "Content-Type": "application/json", "Cache-Control": `public, max-age=${ttl}` },
    });
    waitUntil(cache.put(new Request(manifestKey(site)), copy).catch((err: unknown) => console.error("manifest cache put failed", err)));
  }
  return manifest;
}

/** Drops this location's copy of a site's manifest (also after a partitioned site's move, src/partitions/rebalance.ts). */
export async function forgetManifest(site: CachedSite): Promise<void> {
  await edgeCache()?.delete(new Request(manifestKey(site)));
}

/** A ManifestStore whose saves also drop the location's cached copy (reads go to the store). */
export class InvalidatingManifestStore implements ManifestStore {
  readonly #inner: ManifestStore;
  readonly #registeredAt: number | null;

  /** `registeredAt`: the registration of the registered site these stores are; null for SITES' sites. */
  constructor(inner: ManifestStore, registeredAt: number | null) {
    this.#inner = inner;
    this.#registeredAt = registeredAt;
  }

  load(origin: string): Promise<ShardManifest | null> {
    return this.#inner.load(origin);
  }

  async save(manifest: ShardManifest, fence?: ManifestFence): Promise<void> {
    await this.#inner.save(manifest, fence);
    await forgetManifest({ origin: manifest.origin, registeredAt: this.#registeredAt }).catch((err: unknown) =>
      console.error("manifest cache delete failed", err),
    );
  }
}
