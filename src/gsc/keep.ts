/**
 * Which of Search Console's sitemap reports a site keeps. A property can be a whole domain
 * (`sc-domain:`), whose list holds every host's sitemaps: ours must never be the ones cut, so the
 * site's own sitemaps (its index and, read with `sitemapIndex=`, each shard under it) come first,
 * and other hosts' entries fill a small remainder.
 */
import type { SitemapReport } from "./store.ts";

/**
 * Own sitemaps kept per site: an index and its shards. 2,000 shards hold 100M URLs at 50,000 a
 * shard; a site past that keeps its first 2,000 (by path) and counts the rest as dropped.
 */
const MAX_OWN_SITEMAPS = 2000;
/** Other hosts' sitemaps of the same property kept, for context on the dashboard. */
export const MAX_OTHER_SITEMAPS = 50;

export interface KeptReports {
  sitemaps: SitemapReport[];
  dropped: number;
}

/** A sitemap of this site (its index or a shard), not another host of the same property. */
export function isOwn(path: string, origin: string): boolean {
  try {
    return new URL(path).origin === origin;
  } catch {
    return false;
  }
}

/** The reports of every list read for a site, own first; a path listed twice is kept once (the first). */
export function keepOwnFirst(origin: string, lists: readonly (readonly SitemapReport[])[]): KeptReports {
  const seen = new Set<string>();
  const own: SitemapReport[] = [];
  const other: SitemapReport[] = [];
  let dropped = 0;
  for (const list of lists) {
    for (const report of list) {
      if (seen.has(report.path)) continue;
      seen.add(report.path);
      const [kept, max] = isOwn(report.path, origin) ? [own, MAX_OWN_SITEMAPS] : [other, MAX_OTHER_SITEMAPS];
      if (kept.length < max) kept.push(report);
      else dropped++;
    }
  }
  return { sitemaps: [...own, ...other], dropped };
}
