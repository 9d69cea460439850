/**
 * Cache-Tag values of sitemap documents, for purging exactly what changed: every document of a
 * site, its index, a section, one shard. The HTTP layer sends them (src/http/document-headers.ts);
 * the regeneration purges by them (src/regen/purge.ts): so they live here, below both.
 */

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
function sectionCacheTag(origin: string, section: string): string {
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
