/**
 * Snapshots: pre-rendered gzip bytes of one version of one document (a shard or an index), stored
 * by the regeneration and served in place of a live render.
 *
 * Keys are content-addressed: site, document and content version. A key is written once and never
 * overwritten with other bytes, so KV's eventual consistency cannot mix versions: a reader either
 * gets exactly the bytes of the version its manifest names, or nothing yet (then it renders live,
 * the same bytes). The manifest in D1, written after every piece is stored, is the switch.
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
}

export interface SnapshotStore {
  put(key: string, gzip: Uint8Array, meta: SnapshotMeta): Promise<void>;
  /** The gzip bytes as a stream, or null when absent (not stored, deleted, or not yet visible here). */
  get(key: string): Promise<ReadableStream<Uint8Array> | null>;
  delete(key: string): Promise<void>;
}

/** `s1/{origin}/{section}/{n}/{version}`: ≤ ~330 bytes for any valid origin (KV keys ≤ 512). */
export function shardSnapshotKey(origin: string, section: string, n: number, version: string): string {
  return `${SNAPSHOT_FORMAT}/${origin}/${section}/${n}/${version}`;
}

/** `s1/{origin}/_index/{version}` (no section name starts with "_"). */
export function indexSnapshotKey(origin: string, version: string): string {
  return `${SNAPSHOT_FORMAT}/${origin}/_index/${version}`;
}

export interface CompressedDocument {
  gzip: Uint8Array;
  xmlBytes: number;
}

/**
 * Reads a rendered document through gzip into one buffer (a 50,000-URL shard is ~1–3 MB gzip).
 * Rejects when the render fails, so a partial document is never stored.
 */
export async function compressDocument(xml: ReadableStream<Uint8Array>): Promise<CompressedDocument> {
  let xmlBytes = 0;
  const counted = xml.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        xmlBytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
  const gzip = await readAll(counted.pipeThrough(new CompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>));
  return { gzip, xmlBytes };
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
