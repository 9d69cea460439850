/** The mirror-state port: what a mirror remembers between cron runs (migrations/0006_mirrors.sql, 0007_mirror_validators.sql). */

/** A document's HTTP validators, as a conditional GET sends them back. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export interface MirrorCounts {
  /** Records read from the remote files and sent to the sync. */
  records: number;
  /** Entries refused: a loc that is not a valid URL, or on a site this deployment does not serve (or, in an index, a sitemap not on its host). */
  rejected: number;
  /** Extension parts dropped (images, videos, hreflang links, news entries the record model cannot represent). */
  dropped: number;
  /** Records on another site than the mirror's own: dropped, never written. */
  foreign: number;
  /**
   * Entries that failed validation but kept their URL (docs/mirror.md "Invalid entries"): written
   * without their invalid fields (a lastmod in the future, a priority of 1.5), or, when the entry
   * is malformed as XML, the stored record kept as it is. Counted as seen: never deleted.
   */
  repaired: number;
  /** Documents read again from their start because they changed while the pass was under way. */
  restarts: number;
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

/** Digests of the part of a document a pass already read (src/mirror/digest.ts, hex). */
export interface ReadPrefix {
  /** Of the locs, in order: equal means the part lists the same URLs, so skipping it loses none. */
  locs: string;
  /** Of the whole entries: equal means nothing in the part changed at all. */
  content: string;
}

export interface MirrorState {
  url: string;
  /** Validators of the last committed pass (conditional GET); null after a pass that saw a document change under it. */
  etag: string | null;
  lastModified: string | null;
  /** The site (origin) whose records this mirror writes; null until known (docs/mirror.md "One site"). */
  site: string | null;
  /** The pass under way: its sync (null: none), the validators it fetched, its position. */
  syncId: string | null;
  passEtag: string | null;
  passLastModified: string | null;
  /** -1: the mirrored document itself; n: the n-th sitemap of the index. */
  child: number;
  /** Records of the current document already sent. */
  recordsDone: number;
  /** What those records were (null when none were). */
  prefix: ReadPrefix | null;
  /** With no pass under way: the next listed sitemap to check (an unchanged index's sitemaps are checked over runs). */
  checkChild: number;
  /** The pass has read every document and is checking, at `child`, that those read in earlier runs are unchanged. */
  verifying: boolean;
  /** When (the cron run's time) the pass read the mirrored document itself. */
  topReadAt: number | null;
  /** Digest of the sitemaps the mirrored document lists (null: not an index). */
  childrenDigest: string | null;
  counts: MirrorCounts;
  checkedAt: number | null;
  okAt: number | null;
  error: string | null;
  errorAt: number | null;
}

/** A sitemap an index lists, with what the last pass that read it whole learnt about it. */
export interface MirrorChild {
  url: string;
  validators: Validators;
  /** Digest of its entries (null: not read whole by a pass that finished). */
  digest: string | null;
  /** When (the cron run's time) a pass read it whole. */
  readAt: number | null;
}

/** How, and when (the cron run's time), a pass read the n-th sitemap of an index whole. */
export interface ChildRead {
  n: number;
  validators: Validators;
  digest: string;
  readAt: number;
}

export interface MirrorStateStore {
  /** The registered site whose MIRROR_SITEMAPS these mirrors are, '' for the deployment's: two sites naming one URL keep a mirror each. */
  readonly owner: string;
  load(url: string): Promise<MirrorState | null>;
  /** The states of these mirrors in one read (a mirror never run is absent). */
  loadMany(urls: readonly string[]): Promise<Map<string, MirrorState>>;
  /** Saves the state; with `reads`, in the same write, how those sitemaps were read whole (as setChildRead). */
  save(state: MirrorState, reads?: readonly ChildRead[]): Promise<void>;
  /** Replaces the index's sitemap list of the pass under way (none with validators or digest yet). */
  setChildren(url: string, children: readonly string[]): Promise<void>;
  /** The n-th sitemap of the index (null past the end). */
  child(url: string, n: number): Promise<MirrorChild | null>;
  /** The sitemaps of the index from the n-th on, at most `limit`, in order (empty past the end). */
  children(url: string, from: number, limit: number): Promise<MirrorChild[]>;
  /** Remembers how, and when (the cron run's time), the n-th sitemap was read whole. */
  setChildRead(url: string, n: number, validators: Validators, digest: string, readAt: number): Promise<void>;
  /** Forgets every sitemap's validators and digest: each counts as changed at the next check. */
  forgetChildReads(url: string): Promise<void>;
  /** How many sitemaps the index listed. */
  childCount(url: string): Promise<number>;
}

export const noCounts = (): MirrorCounts => ({
  records: 0,
  rejected: 0,
  dropped: 0,
  foreign: 0,
  repaired: 0,
  restarts: 0,
  inserted: 0,
  updated: 0,
  unchanged: 0,
  deleted: 0,
});

/** The fields of a pass under way, as they are when none is. */
export const NO_PASS = {
  syncId: null,
  passEtag: null,
  passLastModified: null,
  child: -1,
  recordsDone: 0,
  prefix: null,
  checkChild: 0,
  verifying: false,
  topReadAt: null,
  childrenDigest: null,
} as const satisfies Partial<MirrorState>;

export function newMirrorState(url: string): MirrorState {
  return {
    url,
    etag: null,
    lastModified: null,
    site: null,
    ...NO_PASS,
    counts: noCounts(),
    checkedAt: null,
    okAt: null,
    error: null,
    errorAt: null,
  };
}
