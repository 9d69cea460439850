/**
 * Snapshots: pre-rendered gzip bytes of one version of one document (a shard or an index), stored
 * by the regeneration and served in place of a live render.
 *
 * The port speaks documents and handles: `commit` stores a document's bytes and returns the
 * handle the manifest keeps; the store alone knows how a handle is spelled, which keys it owns
 * and whether it holds a given document. Handles are content-addressed (site, document, content
 * version) and written once, never overwritten with other bytes, so KV's eventual consistency
 * cannot mix versions: a reader either gets exactly the bytes of the version its manifest names,
 * or nothing yet (then it renders live, the same bytes). The manifest in D1, written after every
 * piece is stored, is the switch.
 *
 * A gzip larger than one stored value (a 50 MiB shard of barely compressible URLs is ~38 MB gzip;
 * a KV value holds at most 25 MiB) is stored in parts, written while the document renders so the
 * whole gzip is never in memory, before the document's head: every key written is announced first
 * (`beforeWrite`) so that the garbage collection can delete it if no published manifest takes it.
 * KV keeps them (src/adapters/kv/snapshot-store.ts, its keys in snapshot-layout.ts).
 */

import type { BlockStat } from "../core/block-plan.ts";
import type { BlockLayout } from "../core/gzip-blocks.ts";

/** The document a snapshot holds: a site's index or one shard, at one content version. */
export type SnapshotDocument =
  | { kind: "index"; origin: string; version: string }
  | { kind: "shard"; origin: string; section: string; n: number; version: string };

/** Names a stored snapshot (kept in the manifest); opaque outside the store that made it. */
export type SnapshotHandle = string;

export interface SnapshotMeta {
  /** Content version the bytes render. */
  version: string;
  /** Uncompressed (identity) bytes. */
  xmlBytes: number;
  /** Stored gzip bytes. */
  gzBytes: number;
  /** When it was stored (ms). */
  storedAt: number;
  /** Number of parts when stored in parts (the head then holds no bytes); absent: the head holds them all. */
  parts?: number;
  /** Bytes of the block table stored after the gzip (a shard's, StoredBlocks); absent: none. */
  table?: number;
}

/** A document's gzip as stored so far: the full parts are written, the rest is in memory. */
export interface StagedSnapshot {
  /** Id of the written parts (null: the whole gzip fitted in `tail`). */
  partsId: string | null;
  /** Parts written under `partsId`. */
  parts: number;
  /** The last bytes (less than one part), written by `commit`. */
  tail: Uint8Array;
  gzBytes: number;
}

/**
 * A shard snapshot's deflate blocks (issue 53), stored with it: each block's figures
 * (core/block-plan.ts: start, live rows, planned bytes, kinds, change stamp, fingerprints) and where
 * its deflated bytes sit in the file. What a change needs to re-render one block and splice the
 * file (src/regen/splice.ts) without reading the shard's other rows; never served.
 */
export interface StoredBlocks {
  /** The shard version the snapshot holds. */
  version: string;
  blocks: (BlockStat & BlockLayout)[];
}

/** Called with a key before the store first writes under it (to register it for the garbage collection). */
export type BeforeWrite = (key: string) => Promise<void>;

export interface SnapshotStore {
  /**
   * Reads a gzip stream to its end, writing each full part as soon as it fills; `beforeWrite`
   * runs once, with the key the parts are written under, before the first part is written. A
   * failed write does not stop the reading (the document's render runs to its end); the promise
   * then rejects with that error once the stream ended.
   */
  stage(gzip: ReadableStream<Uint8Array>, beforeWrite: BeforeWrite): Promise<StagedSnapshot>;
  /**
   * Writes the head of `document` (`beforeWrite` runs first, with its key): after this, `get` of
   * the returned handle serves the document.
   */
  commit(document: SnapshotDocument, staged: StagedSnapshot, meta: SnapshotMeta, beforeWrite: BeforeWrite, blocks?: StoredBlocks): Promise<SnapshotHandle>;
  /**
   * A shard snapshot's gzip bytes and the block table it was committed with, for a splice; null
   * when it has none, is not visible here yet, or holds more than `maxGzipBytes`.
   */
  withBlocks(handle: SnapshotHandle, maxGzipBytes: number): Promise<{ gzip: Uint8Array; blocks: StoredBlocks } | null>;
  /** The gzip bytes as a stream, or null when absent (not stored, deleted, or not yet visible here). */
  get(handle: SnapshotHandle): Promise<ReadableStream<Uint8Array> | null>;
  /** The keys a handle owns (its head, and its parts): what must not be collected while it is in use. */
  ownedKeys(handle: SnapshotHandle): string[];
  /** Whether a handle holds `document` (that document, that version). */
  holds(handle: SnapshotHandle, document: SnapshotDocument): boolean;
  /**
   * Whether every part of a snapshot stored in parts is still there (one listing; a snapshot in one
   * value answers true without a read): a site pass keeps a stored snapshot of an unchanged shard
   * only when it is whole, so a lost part heals at the next pass instead of never.
   */
  intact(handle: SnapshotHandle): Promise<boolean>;
  /** Deletes what a key given to `beforeWrite` names: a head and its parts, or parts no head took. */
  delete(key: string): Promise<void>;
  /** Stored gzip bytes of those of `handles` (of `origin`) that are found, for the status. */
  storedBytes(origin: string, handles: readonly SnapshotHandle[]): Promise<Map<string, number>>;
  /**
   * One page of the handles stored for `origin`, at most `limit`, from `cursor` (null: the first
   * page): what the purge of a deleted site (src/jobs/site-purge.ts) deletes. `next` is null after
   * the last page.
   */
  siteHandles(origin: string, limit: number, cursor: string | null): Promise<{ handles: SnapshotHandle[]; next: string | null }>;
}
