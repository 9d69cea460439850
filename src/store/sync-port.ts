/**
 * The full sync's port (docs/sync.md): a scope made equal to the batches sent under it, committed
 * or aborted as one; part of the record-store port (src/store/port.ts `RecordStore.sync`), kept in
 * its own file as its own idea.
 */
import type { ValidRecord } from "../core/validate.ts";
import type { UpsertResult } from "./write-result.ts";

/**
 * What a sync makes equal to its input: the live records of `sites`, narrowed to one section
 * and/or to the records one source brought in (a mirror: `mirror:<url>`; null = any source).
 */
export interface StartOptions {
  maxDelete: number;
  ttlMs: number;
  maxOpenPerSite?: number;
  /**
   * The partition count the store's rows are served under while the sync is open (a partitioned
   * site's layout's `settled`, src/partitions/sync.ts): its guard and commit see only those rows.
   * Absent: every row.
   */
  servedBy?: number;
}

export interface SyncScope {
  sites: readonly string[];
  section: string | null;
  source: string | null;
}

export type SyncState = "open" | "committing" | "committed" | "aborted";

export interface SyncInfo {
  id: string;
  scope: SyncScope;
  state: SyncState;
  /** The guard: the largest share (0–1) of the scope's live records the commit may delete. */
  maxDelete: number;
  startedAt: number;
  /** An open sync not sent to or committed by then is abandoned (swept by the cron). */
  expiresAt: number;
  /** Records received under the sync, and what writing them did. */
  received: number;
  inserted: number;
  updated: number;
  unchanged: number;
  /** Records of the scope tombstoned by the commit so far. */
  deleted: number;
}

export interface CommitOptions {
  maxDelete?: number;
  maxChunks: number;
  /**
   * This sync is one partition's part of a site's sync (src/partitions/sync.ts) whose input was not
   * empty: a part that received nothing is then no empty input, and its records are deleted as any unseen.
   */
  partOfNonEmpty?: boolean;
  /**
   * This sync is one partition's part of a site's sync, whose guard holds for the site as a whole
   * (src/partitions/sync.ts). "probe": this part's guard is checked and nothing moves on, an open
   * part stays open whatever its counts (so a refusal of the site leaves every part abortable).
   * "passed": the site's guard passed at `maxDelete`; the part moves on without its own guard
   * (its share may be above the site's) and records the site's `maxDelete` as its guard.
   */
  siteGuard?: "probe" | "passed";
}

export interface SyncCommit {
  sync: SyncInfo;
  /** false: the commit stopped at its chunk budget; commit again to go on (idempotent). */
  done: boolean;
}

/**
 * Full sync: a scope made equal to an input sent in batches. Nothing is deleted before `commit`,
 * so an abandoned sync (a killed client) deletes nothing; the commit tombstones, in bounded
 * chunks, the scope's live records the sync did not see and that did not change after it started
 * (a concurrent writer's new record is kept). A commit can be retried until done.
 *
 * Errors: SyncNotFoundError, SyncStateError, SyncScopeError, SyncGuardError, SyncEmptyError
 * (src/store/errors.ts).
 */
export interface RecordSync {
  /**
   * `maxOpenPerSite`: started only while every site of the scope has fewer open (or committing) syncs,
   * checked in the same statement as the insert (concurrent starts cannot pass it together); else SyncQuotaError.
   */
  start(scope: SyncScope, options: StartOptions, now?: number): Promise<SyncInfo>;
  get(id: string): Promise<SyncInfo | null>;
  /**
   * Upserts one batch under an open sync (as RecordWriter.upsert, records written with the scope's
   * source) and notes its records as seen, in one transaction; extends the expiry by the ttl.
   * Every record must be in the scope (SyncScopeError otherwise; nothing written).
   */
  upsert(id: string, records: readonly ValidRecord[], now?: number): Promise<UpsertResult>;
  /**
   * Notes the live records with these locs (normalised, in the scope's sites) as seen, writing
   * nothing: an input that lists a URL it cannot describe validly keeps the stored record (a
   * mirror's malformed entry, docs/mirror.md). Counted as received; extends the expiry. Returns
   * how many stored records it matched.
   */
  keep(id: string, locs: readonly string[], now?: number): Promise<number>;
  /**
   * Starts (guard: empty input and over-share deletions are refused, nothing deleted) or resumes
   * the commit, tombstoning at most `maxChunks` chunks. `maxDelete` overrides the sync's guard.
   */
  commit(id: string, options: CommitOptions, now?: number): Promise<SyncCommit>;
  /** Ends an open sync without deleting anything. A committing or committed sync cannot be aborted. */
  abort(id: string, now?: number): Promise<SyncInfo>;
  /**
   * Live syncs whose scope includes `origin` (status, the open syncs' cap): committing, or open and not past their
   * expiry; `start` ends its scope's open syncs past their expiry, so what the cap no longer counts cannot be revived.
   */
  active(origin: string, now?: number): Promise<SyncInfo[]>;
  /**
   * Aborts open syncs past their expiry (nothing deleted), finishes commits past it (their guard
   * passed: a commit its client abandoned completes, docs/sync.md), forgets what finished syncs saw,
   * and forgets finished syncs older than `keepMs`, in at most `maxStatements` statements.
   */
  sweep(now: number, keepMs: number, maxStatements: number): Promise<SyncSweep>;
}

/** What one sweep of a store's syncs did (RecordSync.sweep). */
export interface SyncSweep {
  /** Open syncs past their expiry, now aborted. */
  expired: number;
  /** Commits past their expiry (abandoned by their client), now finished. */
  finished: number;
  /** Finished syncs forgotten (past the keep time). */
  forgotten: number;
  /** Rows of what finished syncs saw, forgotten. */
  seenRows: number;
  /** Statements it ran. */
  statements: number;
  /** It stopped at its statement budget with work left. */
  moreLeft: boolean;
}
