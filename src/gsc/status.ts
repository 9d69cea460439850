/**
 * The Search Console section of the admin status and the dashboard: per sitemap what Google last
 * reported, flagged when Google has not downloaded it since it changed, or found errors in it.
 */
import { INDEX_PATH } from "../documents/paths.ts";
import { type ShardManifest, listedShards } from "../manifest/manifest.ts";
import { isOwn } from "./keep.ts";
import type { GscStatusStore, SitemapReport } from "./store.ts";

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * When the document at `url` last changed, from the manifest: the index changes with any listed
 * shard (its newest change), a shard with its own records; null for a URL that is not ours.
 */
function changedAt(url: string, origin: string, manifest: ShardManifest | null): number | null {
  if (!manifest) return null;
  let path: string;
  try {
    const u = new URL(url);
    if (u.origin !== origin) return null;
    path = u.pathname;
  } catch {
    return null;
  }
  const listed = listedShards(manifest);
  if (path === INDEX_PATH) return listed.length > 0 ? Math.max(...listed.map((s) => s.lastChange)) : null;
  const m = /^\/sitemap-(.+)-(\d+)\.xml(?:\.gz)?$/.exec(path);
  const shard = m && listed.find((s) => s.section === m[1] && s.n === Number(m[2]));
  return shard ? shard.lastChange : null;
}

function row(report: SitemapReport, origin: string, manifest: ShardManifest | null) {
  const changed = changedAt(report.path, origin, manifest);
  return {
    path: report.path,
    lastSubmitted: iso(report.lastSubmitted),
    lastDownloaded: iso(report.lastDownloaded),
    isPending: report.isPending,
    isSitemapsIndex: report.isSitemapsIndex,
    // null: Google's count was missing or unreadable; shown as unknown, never as 0.
    errors: report.errors,
    warnings: report.warnings,
    submitted: report.contents.some((c) => c.submitted === null) ? null : report.contents.reduce((sum, c) => sum + (c.submitted ?? 0), 0),
    contents: report.contents,
    changedAt: iso(changed),
    // Google's copy is older than ours (or it never fetched it).
    notDownloadedSinceChange: changed !== null && (report.lastDownloaded === null || report.lastDownloaded < changed),
    hasErrors: report.errors !== null && report.errors > 0,
    /** A sitemap of this site (its index or a shard), not another host of the same property. */
    own: isOwn(report.path, origin),
  };
}

type SearchConsoleSitemap = ReturnType<typeof row>;

const paths = new Intl.Collator("en", { numeric: true });
/** The site's own sitemaps first (its index, then its shards: pages-2 before pages-10), then other hosts' of the same property. */
const byOwnIndexPath = (a: SearchConsoleSitemap, b: SearchConsoleSitemap): number =>
  Number(b.own) - Number(a.own) || Number(b.isSitemapsIndex) - Number(a.isSitemapsIndex) || paths.compare(a.path, b.path);

export interface SearchConsoleStatus {
  /** GSC_SERVICE_ACCOUNT set and a DB to keep the answers in. */
  enabled: boolean;
  lastRead: string | null;
  lastSuccess: string | null;
  httpStatus: number | null;
  lastError: string | null;
  /** Earliest retry after a failure. */
  nextAttempt: string | null;
  /** Sitemaps Search Console listed beyond those kept. */
  dropped: number;
  sitemaps: SearchConsoleSitemap[];
}

export async function searchConsoleStatus(
  store: GscStatusStore | null,
  enabled: boolean,
  origin: string,
  manifest: ShardManifest | null,
): Promise<SearchConsoleStatus> {
  const state = store ? await store.state(origin) : null;
  const sitemaps = store ? await store.sitemaps(origin) : [];
  return {
    enabled: enabled && store !== null,
    lastRead: iso(state?.readAt ?? null),
    lastSuccess: iso(state?.okAt ?? null),
    httpStatus: state?.status ?? null,
    lastError: state?.error ?? null,
    nextAttempt: state && state.failures > 0 ? iso(state.nextAt) : null,
    dropped: state?.dropped ?? 0,
    sitemaps: sitemaps.map((m) => row(m, origin, manifest)).sort(byOwnIndexPath),
  };
}
