/**
 * The one place that builds the keys a site's documents are cached under (the Cache API's documents,
 * the manifest's copy, the repeat validators, the browser view's entries, robots.txt's answer) and
 * the site part of their ETags. Every key names the site's registration besides its origin: a
 * registered site deleted and another registered at the same origin later (docs/tenants.md) must
 * never reach what was cached for the first, and content versions alone do not tell them apart (a
 * shard's version is its rows' keys and change stamps: two databases' keys can coincide, and so can
 * stamps). The Cache API is per data centre, so the purge could not delete those entries everywhere:
 * under another registration they are unreachable, and expire.
 */
import { Fingerprint } from "../core/fingerprint.ts";

/** Whose cached entries: the site's origin, and when a registered site was registered (its createdAt); null for a site of SITES. */
export interface CachedSite {
  readonly origin: string;
  readonly registeredAt: number | null;
}

/** `v` for a site of the variables, `r<createdAt>` for a registration. */
function registration(site: CachedSite): string {
  return site.registeredAt === null ? "v" : `r${site.registeredAt}`;
}

/**
 * `<origin><path>?edge-sitemaps=<kind>.<registration>.<part>…`: a URL of the site's own origin (the
 * Cache API keys by URL), one `kind` per sort of entry, each part URL-encoded. No request can ask for
 * it: query strings never reach a key.
 */
export function cacheKey(site: CachedSite, path: string, kind: string, ...parts: readonly string[]): string {
  let key = `${site.origin}${path}?edge-sitemaps=${kind}.${registration(site)}`;
  for (const part of parts) key += `.${encodeURIComponent(part)}`;
  return key;
}

const siteTags = new Map<string, string>();
/** Tags kept per isolate at most (a tag is cheap to compute again). */
const SITE_TAGS_KEPT = 10_000;

/**
 * 8 hex digits naming a site in its documents' ETags: its origin, and its registration for a
 * registered site, so a crawler or shared cache revalidating with an earlier tenant's ETag never gets
 * a 304 from a later tenant at that origin. A site of SITES keeps the tag of its origin alone.
 */
export function siteTag(site: CachedSite): string {
  const name = site.registeredAt === null ? site.origin : `${site.origin} ${registration(site)}`;
  let tag = siteTags.get(name);
  if (tag === undefined) {
    tag = new Fingerprint().addString(name).digest().slice(0, 8);
    if (siteTags.size >= SITE_TAGS_KEPT) siteTags.clear();
    siteTags.set(name, tag);
  }
  return tag;
}
