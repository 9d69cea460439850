/**
 * Response headers of sitemap documents beyond the core ones (src/http/respond.ts): per-site
 * strong ETags, config-driven Cache-Control, and Cache-Tag for purging exactly what changed.
 */
import type { CacheConfig } from "../config.ts";
import { Fingerprint } from "../core/fingerprint.ts";
import { type Representation, etagFor } from "../http/respond.ts";

const siteTags = new Map<string, string>();

/** 8 hex digits naming a site, cached per isolate. */
export function siteTag(origin: string): string {
  let tag = siteTags.get(origin);
  if (tag === undefined) {
    tag = new Fingerprint().addString(origin).digest().slice(0, 8);
    siteTags.set(origin, tag);
  }
  return tag;
}

/**
 * Strong ETag of one representation of one version of a site's document: `"<site><version>-<r>"`.
 * The site part keeps ETags per site even when two sites' content versions coincide.
 */
export function documentEtag(origin: string, version: string, representation: Representation): string {
  return etagFor(`${siteTag(origin)}${version}`, representation);
}

/**
 * `Cache-Control` of a sitemap document: `max-age` for browsers and crawlers, `s-maxage` and
 * `stale-while-revalidate` for shared caches (the tiered Workers Cache honours both), and
 * `no-transform` so the edge never re-encodes bytes a strong ETag names.
 */
export function documentCacheControl(cache: CacheConfig): string {
  const parts = ["public", `max-age=${cache.maxAge}`, `s-maxage=${cache.sMaxAge}`];
  if (cache.staleWhileRevalidate > 0) parts.push(`stale-while-revalidate=${cache.staleWhileRevalidate}`);
  parts.push("no-transform");
  return parts.join(", ");
}

/** The host part of tags (`example.com`, `localhost:8787`): the scheme never splits a site's cache. */
function tagHost(origin: string): string {
  return new URL(origin).host.toLowerCase();
}

/** Tag of every sitemap document of a site. */
export function siteCacheTag(origin: string): string {
  return `sitemaps/${tagHost(origin)}`;
}

/** Tag of a site's index. */
export function indexCacheTag(origin: string): string {
  return `sitemaps/${tagHost(origin)}/index`;
}

/** Tag of every shard of a section. */
export function sectionCacheTag(origin: string, section: string): string {
  return `sitemaps/${tagHost(origin)}/${section}`;
}

/** Tag of one shard (all its representations). */
export function shardCacheTag(origin: string, section: string, n: number): string {
  return `sitemaps/${tagHost(origin)}/${section}/${n}`;
}

/** Cache-Tag values of a shard: site, section, shard. */
export function shardCacheTags(origin: string, section: string, n: number): string[] {
  return [siteCacheTag(origin), sectionCacheTag(origin, section), shardCacheTag(origin, section, n)];
}

/** Cache-Tag values of the index: site, index. */
export function indexCacheTags(origin: string): string[] {
  return [siteCacheTag(origin), indexCacheTag(origin)];
}
