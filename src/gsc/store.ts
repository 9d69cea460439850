/**
 * What Search Console said about a site's sitemaps (its `sitemaps.list` answer), and when it was
 * read: the port (kept in D1 by src/adapters/d1/gsc-status.ts, migrations/0008_gsc_status.sql).
 */

/** One sitemap as Search Console reports it; times in ms, null when Google gives none. */
export interface SitemapReport {
  path: string;
  lastSubmitted: number | null;
  lastDownloaded: number | null;
  isPending: boolean;
  isSitemapsIndex: boolean;
  /** null: Google gave no count we could read (unknown, never taken as 0). */
  errors: number | null;
  warnings: number | null;
  /** URLs submitted per content type ("web", "image", "video", "news", …); null submitted = unknown. */
  contents: { type: string; submitted: number | null }[];
}

/** The last read of a site and its outcome. */
export interface ReadState {
  origin: string;
  readAt: number | null;
  okAt: number | null;
  /** HTTP status of the last attempt; 0 = network error or timeout. */
  status: number | null;
  /** Why the last attempt failed (redacted, cut); null after a success. */
  error: string | null;
  failures: number;
  /** Earliest next attempt after a failure (ms). */
  nextAt: number;
  /** Sitemaps listed beyond what is stored (src/gsc/keep.ts), or not of the API's shape. */
  dropped: number;
}

export const newReadState = (origin: string): ReadState => ({
  origin,
  readAt: null,
  okAt: null,
  status: null,
  error: null,
  failures: 0,
  nextAt: 0,
  dropped: 0,
});

export interface GscStatusStore {
  state(origin: string): Promise<ReadState | null>;
  /** A failed read: the state only, the sitemaps kept as they were. */
  saveState(state: ReadState): Promise<void>;
  /** A successful read: the site's sitemaps replaced by `sitemaps` and the state saved, at once. */
  saveRead(state: ReadState, sitemaps: readonly SitemapReport[]): Promise<void>;
  sitemaps(origin: string): Promise<SitemapReport[]>;
}
