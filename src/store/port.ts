/**
 * The record-store port: everything the rest of the Worker asks of the place where URL records
 * live. D1 and KV are adapters of it (src/adapters/d1, src/adapters/kv); src/services.ts alone
 * chooses and wires one. Capabilities a store may lack are members that are `null` when absent:
 * callers test `store.news === null`, never whether a method exists.
 *
 * Nothing here imports an adapter, Hono or Cloudflare types.
 */
import type { StoredRecord, UrlRow } from "../core/types.ts";
import type { ValidRecord } from "../core/validate.ts";
import type { RecordSync } from "./sync-port.ts";
import type { DeleteResult, UpsertResult } from "./write-result.ts";

export type { CommitOptions, RecordSync, StartOptions, SyncCommit, SyncInfo, SyncScope, SyncState, SyncSweep } from "./sync-port.ts";
export type { DeleteResult, UpsertResult } from "./write-result.ts";

/** A contiguous range of stable keys within one site section (bounds inclusive). */
export interface ShardRange {
  origin: string;
  section: string;
  firstKey: number;
  lastKey: number;
}

/** What planning a manifest needs of every record, tombstones included. */
export interface KeyRow {
  section: string;
  key: number;
  /** Change stamp (ms) of the last real change, deletion included. */
  updatedAt: number;
  deleted: boolean;
  /** UTF-8 bytes of the record's `<url>` element. */
  size: number;
  /** Extension kinds (EXT_* bits) of the record: the namespaces its shard must declare. */
  extKinds: number;
}

/** A record read back by loc, tombstone or not. */
export interface FoundRecord extends StoredRecord {
  origin: string;
  deleted: boolean;
}

export interface RecordReader {
  /**
   * Live records of one range, ascending by key, a page at a time as the store reads them (keyset
   * pages, blocks; never offsets). Pages, so a renderer awaits once per page (core/source.ts).
   */
  recordPages(range: ShardRange): AsyncIterable<readonly StoredRecord[]>;
  /**
   * The same live records as row arrays with only what rendering needs (core/types.ts UrlRow),
   * when the store can read them so (D1's `.raw()`): a cold shard's rows never become objects.
   * `null`: render from `recordPages`.
   */
  readonly rowPages: ((range: ShardRange) => AsyncIterable<readonly UrlRow[]>) | null;
  /**
   * Every record of a site, tombstones too, in (section, key) order; the first `limit` only when
   * given (a request's bounded walk: a store asks for no more rows than that where it can, KV reads
   * whole blocks).
   */
  keyRows(origin: string, limit?: number): AsyncIterable<KeyRow>;
  /** The record stored under a normalised loc, tombstone or not; null when never stored. */
  find(loc: string): Promise<FoundRecord | null>;
}

export interface RecordWriter {
  /** Insert or update by loc (distinct locs, as validateBatch guarantees). A loc's key never changes. */
  upsert(records: readonly ValidRecord[], now?: number): Promise<UpsertResult>;
  /** Tombstones: deleted records stay, marked, so regeneration and notification see the removal. */
  delete(locs: readonly string[], now?: number): Promise<DeleteResult>;
}

/**
 * A point in a site's change order. A stamp-ordered feed (KV) orders by (change stamp, key); a
 * commit-ordered one (D1, migration 0023) by `seq` alone, and its `stamp` and `key` then only say
 * which change was read last (status, housekeeping's index ranges), never where the feed goes on.
 */
export interface ChangeStamp {
  stamp: number;
  key: number;
  /**
   * The change's number in its database's commit order (`urls.seq`): present on every point a
   * commit-ordered feed hands out. A change committed after a read is numbered past it whatever
   * its stamp says, so a cursor on `seq` cannot skip one (a writer's clock may be behind).
   */
  seq?: number;
}

/** A position in a site's change order, plus the sequence of section moves. */
export interface ChangeCursor extends ChangeStamp {
  /**
   * Section moves with a larger sequence number are after the cursor (0 when a store has none).
   * Notification passes Number.MAX_SAFE_INTEGER: it announces URLs, not the sections they left.
   */
  moveSeq: number;
}

/** One change of a record. */
export interface Change extends KeyRow {
  loc: string;
  /**
   * true: this row says the record left `section` (it now lives in another section, where it
   * appears as a change of its own). Regeneration re-renders the section it left; notification
   * skips it (the URL itself is announced through its own row).
   */
  moved: boolean;
}

export interface ChangePage {
  /** Changes after the cursor, in change order (move rows first); a record's own row appears once per page at most. */
  rows: Change[];
  /** The cursor after the rows returned. */
  cursor: ChangeCursor;
  /** No more changes after `cursor` right now. */
  done: boolean;
}

/**
 * The change feed: regeneration and notification both read it, each with its own cursor.
 * A commit-ordered feed (D1) reads changes in commit order (`seq`), so its cursors need no settle
 * window and `until` is ignored. A stamp-ordered one (KV) reads them in (stamp, key) order, and
 * `until` (ms, inclusive) leaves younger record changes for a later read (the settle window).
 * Move rows come in sequence order whatever their stamp.
 */
export interface ChangeFeed {
  /**
   * true: a read costs the changes it returns (an index on change stamps) and section moves appear
   * as `moved` rows, so regeneration plans from the feed alone (D1; KV, whose writer objects keep
   * the index, docs/kv.md). false: every read walks the whole site, so regeneration re-plans by
   * walking key rows instead.
   */
  readonly indexed: boolean;
  /**
   * Up to `limit` changes after `after`; `after = null` returns no rows and the cursor of the current
   * head. A commit-ordered feed given a cursor without `seq` (saved before migration 0024) reads on
   * from the first change stamped within a settle window before it (some changes read again).
   */
  changes(origin: string, after: ChangeCursor | null, limit: number, until?: number): Promise<ChangePage>;
  /** The newest change of a site (not younger than `until` (ms) on a stamp-ordered feed); null: the site has no records. */
  newest(origin: string, until: number): Promise<ChangeStamp | null>;
  /** How many changes of a site lie after `after` (the status endpoint). */
  pending(origin: string, after: ChangeStamp): Promise<number>;
}

/** A site's news articles in a window (news sitemaps). */
export interface NewsStats {
  /** Live articles published in the window. */
  count: number;
  /** Newest change stamp (ms) of an article in the window, tombstones included; 0 when none. */
  lastUpdated: number;
  /** Publication time (ms) of the newest live article in the window; 0 when none. */
  newestPublication: number;
  /** Publication time (ms) of the newest live article that already left the window; 0 when none. */
  lastExpiredPublication: number;
}

export interface NewsIndex {
  stats(origin: string, sinceMs: number, untilMs: number): Promise<NewsStats>;
  /** Articles of [sinceMs, untilMs], newest first, `limit` from `offset`. */
  records(origin: string, sinceMs: number, untilMs: number, offset: number, limit: number): Promise<StoredRecord[]>;
}

export interface RecentIndex {
  /** The `limit` most recently changed live records of a site, newest change first. */
  records(origin: string, limit: number): Promise<StoredRecord[]>;
}

/** A record among a site's newest changes, as the lastmod check reads it (src/lastmod/trust.ts). */
export interface SampledRecord {
  section: string;
  loc: string;
  lastmod: string | null;
  /** Change stamp (ms): when the record was last written with a real change. */
  updatedAt: number;
}

/** A bounded look at a site's newest changes (status: does its lastmod look trustworthy). */
export interface ChangeSample {
  /**
   * The live records among the site's `limit` newest changes, newest first: tombstones take their
   * place in the bound and are left out, so a read costs at most `limit` rows whatever the site's size.
   */
  newest(origin: string, limit: number): Promise<SampledRecord[]>;
}

/** A point in (section, key) order. */
export interface ScanPosition {
  section: string;
  key: number;
}

/** A record as the one-pass regeneration reads it: content for rendering plus what planning needs. */
export type ScannedRecord = StoredRecord & KeyRow;

export interface RangeScan {
  /**
   * Every record of a site (tombstones too) from `from` to `until` (inclusive; null = the end of
   * the site) in (section, key) order, content included: regeneration plans and renders from the
   * same pass, one read per row.
   */
  scan(origin: string, from: ScanPosition, until: ScanPosition | null): AsyncIterable<ScannedRecord>;
}

/**
 * Whether a range's rows moved past what a manifest saw: a live render must not go out, or into a
 * cache, under an ETag that names other bytes (a record changed outside the API, or between the
 * manifest read and the row read).
 */
export interface RangeFreshness {
  /** true when a record of the range (tombstones included) has a change stamp after `stamp` (ms). */
  changedAfter(range: ShardRange, stamp: number): Promise<boolean>;
}

/**
 * Where a store's request-path copy trails its committed writes (KV: each site's writer object
 * commits a batch in its SQLite, then projects it to KV; docs/kv.md "Projection").
 */
export interface ProjectionState {
  /** Blocks and values whose request-path copy is behind the committed records. */
  pending: number;
  /** Since when (ms) the oldest of them has been waiting; null when none. */
  oldestSince: number | null;
  /** Items whose last write failed (retried with backoff). */
  failing: number;
  /** The last failure's message; null when none failed. */
  lastError: string | null;
  /** When the next retry is due (ms); null when none failed. */
  nextRetryAt: number | null;
  /** The store is still taking over records written before it kept its own copy (writes answer busy meanwhile). */
  adopting: boolean;
}

interface Projection {
  status(origin: string): Promise<ProjectionState>;
}

/**
 * Removing rows for good: a partition's rows that a move gave to another partition, once no
 * crawl can still need them (src/partitions/purge.ts). No tombstone, nothing announced: the rows
 * were already left out of everything the partition serves.
 */
export interface RowPurge {
  /** Every row of the site in key order, those a partition leaves out of what it serves too. */
  readonly rows: RangeScan;
  /** Removes the site's rows of these keys; returns how many there were. */
  purge(origin: string, keys: readonly number[]): Promise<number>;
}

/** A row as a store keeps it, for a move's copy between two stores of one kind (its key is the source store's). */
export interface CopiedRow {
  key: number;
  origin: string;
  section: string;
  loc: string;
  lastmod: string | null;
  changefreq: string | null;
  priority: number | null;
  /** Extension data as the store keeps it (JSON). */
  ext: string | null;
  size: number;
  /** The change stamp it was written with (ms): "newer wins" compares these. */
  updatedAt: number;
  deleted: boolean;
  /** Who brought it (RecordSync): a mirror's records stay its own in their new store. */
  source: string | null;
  /** Its place in its database's commit order (migration 0023): "newer" between copies compares these. */
  seq: number;
}

/** One change of a database's commit-ordered feed (RowCopy.changesAfter). */
export interface SequencedChange {
  seq: number;
  loc: string;
  deleted: boolean;
  /** The row's text as it is now (UTF-16 units of loc and ext, ~200 for the rest): what reading it costs the isolate. */
  chars: number;
}

/**
 * A move between a site's partitions (src/partitions/rebalance.ts): rows are read and written as
 * stored, with their change stamps. The copy only fills what is absent, so a page copied again —
 * by a step repeated, or one overtaken by another — never writes over a row a write put there,
 * nor brings a deleted loc back; writes during the move, and the catch-up before the flip, put
 * the newer row over the older (docs/capacity.md "Writes during a move").
 */
export interface RowCopy {
  /** Up to `limit` rows of a site after `after` in (section, key) order, tombstones included. */
  page(origin: string, after: ScanPosition, limit: number): Promise<CopiedRow[]>;
  /**
   * The rows of these locs, as stored (locs with none are left out). `movedIn`: a move to that
   * many partitions takes them away from this database; they are marked in the same statement,
   * hidden from the move's flip on (migration 0024).
   */
  rows(locs: readonly string[], movedIn?: number): Promise<CopiedRow[]>;
  /** Marks the rows of these keys as taken away from this database by a move to `movedIn` partitions (as `rows` does). */
  markMoved(keys: readonly number[], movedIn: number): Promise<void>;
  /**
   * Per key range (section, first and last key, as a manifest's shards), the live rows a move to
   * `movedIn` partitions took away from this database: what its flip hides from the range's count.
   */
  movedCounts(origin: string, ranges: readonly { section: string; firstKey: number; lastKey: number }[], movedIn: number): Promise<number[]>;
  /**
   * Writes rows as stored where the loc is absent (`missing`), or also over a copy of an earlier
   * commit of the same old home (`newer`: never over a row written in this database); returns rows written.
   */
  put(rows: readonly CopiedRow[], mode: "missing" | "newer"): Promise<number>;
  /** Tombstones, stamped `now`, each loc whose row is live and a copy of a commit before the `seq` beside it; returns how many. */
  deleteOlder(entries: readonly { loc: string; seq: number }[], now: number): Promise<number>;
  /** The database's last committed change number: a feed read from it sees every later commit. */
  head(): Promise<number>;
  /** Up to `limit` changes of a site after `after` in commit order, rows a partition hides included. */
  changesAfter(origin: string, after: number, limit: number): Promise<SequencedChange[]>;
}

/** The port. */
export interface RecordStore {
  /** "d1" or "kv": for status and logs. */
  readonly kind: string;
  readonly reader: RecordReader;
  readonly writer: RecordWriter;
  readonly changes: ChangeFeed;
  /** News sitemaps; null: the store keeps no news index (news sitemaps 404, none listed). */
  readonly news: NewsIndex | null;
  /** The Atom feed of recent changes; null: no feed. */
  readonly recent: RecentIndex | null;
  /** The newest changes, bounded (status `lastmod`, src/lastmod/trust.ts); null: not read. */
  readonly sample: ChangeSample | null;
  /** One-pass regeneration; null: regeneration reads key rows, then records per shard. */
  readonly scan: RangeScan | null;
  /** Checked before a live render; null: not checked. */
  readonly freshness: RangeFreshness | null;
  /** Full sync (admin syncs, mirrors); null: the store cannot (KV: docs/sync.md says why). */
  readonly sync: RecordSync | null;
  /** How far the request-path copy trails committed writes (status); null: it never does (D1 reads what it writes). */
  readonly projection: Projection | null;
  /** Removing the rows a partition gave away in a move; null: the store is never a partition (KV). */
  readonly purge: RowPurge | null;
  /** Filling a partition added to a site by a move; null: the store is never a partition (KV). */
  readonly copy: RowCopy | null;
}
