/**
 * Snapshots: pre-rendered gzip bytes of one version of one document (a shard or an index), stored
 * by the regeneration and served in place of a live render.
 *
 * Keys are content-addressed: site, document and content version. A key is written once and never
 * overwritten with other bytes, so KV's eventual consistency cannot mix versions: a reader either
 * gets exactly the bytes of the version its manifest names, or nothing yet (then it renders live,
 * the same bytes). The manifest in D1, written after every piece is stored, is the switch.
 *
 * A gzip larger than one part (a 50 MiB shard of barely compressible URLs is ~38 MB gzip; a KV
 * value holds at most 25 MiB) is stored in parts, written while the document renders so the
 * whole gzip is never in memory. Parts are written under a new random id (the version is known
 * only once the render ends) before the document's head, whose key carries that id: the parts
 * are write-once like every key, and whoever holds a head key knows its parts (to serve them, to
 * keep them from the garbage collection, to delete them with it).
 * KV keeps them (src/adapters/kv/snapshot-store.ts).
 */
import { concatBytes } from "../core/bytes.ts";

/** Bumped when the stored form changes (compression, framing): old keys are then simply unused. */
const SNAPSHOT_FORMAT = "s1";

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

export interface SnapshotStore {
  /**
   * Reads a gzip stream to its end, writing each full part as soon as it fills; `beforeParts`
   * runs once, with the parts' prefix, before the first part is written (to register it for the
   * garbage collection). A failed write does not stop the reading (the document's render runs to
   * its end); the promise then rejects with that error once the stream ended.
   */
  stage(gzip: ReadableStream<Uint8Array>, beforeParts: (prefix: string) => Promise<void>): Promise<StagedSnapshot>;
  /** Writes the head: after this, `get(key)` serves the document. `key` comes from `snapshotKey`. */
  commit(key: string, staged: StagedSnapshot, meta: SnapshotMeta): Promise<void>;
  /** The gzip bytes as a stream, or null when absent (not stored, deleted, or not yet visible here). */
  get(key: string): Promise<ReadableStream<Uint8Array> | null>;
  /** Deletes a head and its parts, or (a key from `partsPrefix`) parts no head took. */
  delete(key: string): Promise<void>;
  /** Stored gzip bytes of those of `keys` (heads of `origin`) that are found, for the status. */
  storedBytes(origin: string, keys: readonly string[]): Promise<Map<string, number>>;
}

/** `s1/{origin}/{section}/{n}/{version}`: ≤ ~330 bytes for any valid origin (KV keys ≤ 512). */
export function shardSnapshotKey(origin: string, section: string, n: number, version: string): string {
  return `${siteSnapshotPrefix(origin)}${section}/${n}/${version}`;
}

/** `s1/{origin}/`: the prefix of every head of a site. */
export function siteSnapshotPrefix(origin: string): string {
  return `${SNAPSHOT_FORMAT}/${origin}/`;
}

/** `s1/{origin}/_index/{version}` (no section name starts with "_"). */
export function indexSnapshotKey(origin: string, version: string): string {
  return `${siteSnapshotPrefix(origin)}_index/${version}`;
}

/** The head key of a staged document: the document key, plus the parts' id when it has parts. */
export function snapshotKey(documentKey: string, staged: StagedSnapshot): string {
  return staged.partsId ? `${documentKey}+${staged.partsId}` : documentKey;
}

/** `s1/_parts/{id}/`: the prefix of the parts of one staged document (`{prefix}{i}`, i from 0). */
export function partsPrefix(id: string): string {
  return `${SNAPSHOT_FORMAT}/_parts/${id}/`;
}

const PARTS_ID = /\+([0-9a-f]{32})$/;

/** The parts' prefix of a head key, or null when the head holds all its bytes. */
export function partsOf(key: string): string | null {
  const id = PARTS_ID.exec(key)?.[1];
  return id ? partsPrefix(id) : null;
}

/** A new parts id (random: the document's version is not known while its parts are written). */
export function newPartsId(): string {
  return crypto.randomUUID().replaceAll("-", "");
}

/** A rendered document staged into a snapshot store, with its uncompressed size. */
export interface StagedDocument {
  staged: StagedSnapshot;
  xmlBytes: number;
}

/**
 * Gzips a rendered document into the store's staging (parts written as they fill). Rejects when
 * the render or a write fails, so a partial document is never committed.
 */
export async function stageDocument(
  store: SnapshotStore,
  xml: ReadableStream<Uint8Array>,
  beforeParts: (prefix: string) => Promise<void>,
): Promise<StagedDocument> {
  let xmlBytes = 0;
  const counted = xml.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        xmlBytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  const staged = await store.stage(
    counted.pipeThrough(new CompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>),
    beforeParts,
  );
  return { staged, xmlBytes };
}

/** Concatenates a stream's chunks. Rejects with the stream's error. */
export async function readAll(stream: ReadableStream<Uint8Array>, maxBytes = Number.POSITIVE_INFINITY): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new RangeError(`stream longer than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return concatBytes(chunks, total);
}
