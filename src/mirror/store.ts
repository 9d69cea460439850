/** The mirror-state port: what a mirror remembers between cron runs (migrations/0006_mirrors.sql). */

export interface MirrorCounts {
  /** Records read from the remote files and sent to the sync. */
  records: number;
  /** Records refused: invalid, or on a site this deployment does not serve. */
  rejected: number;
  /** Extension parts dropped (images, videos, hreflang links, news entries the record model cannot represent). */
  dropped: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

export interface MirrorState {
  url: string;
  /** Validators of the last committed pass (conditional GET). */
  etag: string | null;
  lastModified: string | null;
  /** The pass under way: its sync (null: none), the validators it fetched, its position. */
  syncId: string | null;
  passEtag: string | null;
  passLastModified: string | null;
  /** -1: the mirrored document itself; n: the n-th sitemap of the index. */
  child: number;
  /** Records of the current document already sent. */
  recordsDone: number;
  counts: MirrorCounts;
  checkedAt: number | null;
  okAt: number | null;
  error: string | null;
  errorAt: number | null;
}

export interface MirrorStateStore {
  load(url: string): Promise<MirrorState | null>;
  save(state: MirrorState): Promise<void>;
  /** Replaces the index's sitemap list of the pass under way. */
  setChildren(url: string, children: readonly string[]): Promise<void>;
  /** The n-th sitemap of the index (null past the end). */
  child(url: string, n: number): Promise<string | null>;
  /** How many sitemaps the index listed. */
  childCount(url: string): Promise<number>;
}

export const noCounts = (): MirrorCounts => ({ records: 0, rejected: 0, dropped: 0, inserted: 0, updated: 0, unchanged: 0, deleted: 0 });

export function newMirrorState(url: string): MirrorState {
  return {
    url,
    etag: null,
    lastModified: null,
    syncId: null,
    passEtag: null,
    passLastModified: null,
    child: -1,
    recordsDone: 0,
    counts: noCounts(),
    checkedAt: null,
    okAt: null,
    error: null,
    errorAt: null,
  };
}
