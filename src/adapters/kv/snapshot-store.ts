import { concatBytes } from "../../core/bytes.ts";
import type { BeforeWrite, SnapshotDocument, SnapshotHandle, SnapshotMeta, SnapshotStore, StagedSnapshot, StoredBlocks } from "../../snapshots/store.ts";
import { decodeBlocks, encodeBlocks } from "./snapshot-blocks.ts";
import { headKey, isHeadOf, isPartsPrefix, newPartsId, partsOf, partsPrefix, siteHeadPrefix } from "./snapshot-layout.ts";

/**
 * Bytes per part: KV takes at most 25 MiB (26,214,400 bytes) per value; 10 MiB leaves a wide
 * margin and bounds what one staging holds in memory (a part being filled, one being written).
 */
const PART_BYTES = 10 * 1024 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The first `limit` bytes of a stream, the rest read and dropped. */
function firstBytes(limit: number): TransformStream<Uint8Array, Uint8Array> {
  let left = limit;
  return new TransformStream({
    transform(chunk, controller) {
      if (left <= 0) return;
      controller.enqueue(chunk.byteLength <= left ? chunk : chunk.subarray(0, left));
      left -= chunk.byteLength;
    },
  });
}

/** Key pages listed for `storedBytes` at most (1,000 keys each): bounds what a status request costs. */
const STATUS_PAGES = 10;

interface KvSnapshotOptions {
  /** Bytes per part (tests use a small one to store parts without megabytes of data). */
  partBytes?: number;
}

/**
 * Snapshots in the SNAPSHOTS KV namespace, in parts of `partBytes` when larger (src/snapshots/store.ts);
 * a handle is the head's key (snapshot-layout.ts).
 */
export class KvSnapshotStore implements SnapshotStore {
  readonly #kv: KVNamespace;
  readonly #partBytes: number;

  constructor(kv: KVNamespace, options: KvSnapshotOptions = {}) {
    this.#kv = kv;
    this.#partBytes = options.partBytes ?? PART_BYTES;
  }

  async stage(gzip: ReadableStream<Uint8Array>, beforeWrite: BeforeWrite): Promise<StagedSnapshot> {
    const size = this.#partBytes;
    let chunks: Uint8Array[] = [];
    let held = 0;
    let gzBytes = 0;
    let partsId: string | null = null;
    let parts = 0;
    let failure: unknown = null;
    const reader = gzip.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      gzBytes += value.byteLength;
      // After a failed write the bytes are only counted: the render still runs to its end.
      if (failure !== null) continue;
      chunks.push(value);
      held += value.byteLength;
      while (held >= size && failure === null) {
        const all = concatBytes(chunks, held);
        // A copy of the remainder: a view would keep the whole buffer alive until the next part.
        chunks = held > size ? [all.slice(size)] : [];
        held -= size;
        try {
          if (partsId === null) {
            partsId = newPartsId();
            await beforeWrite(partsPrefix(partsId));
          }
          await this.#kv.put(`${partsPrefix(partsId)}${parts}`, all.subarray(0, size));
          parts++;
        } catch (err) {
          failure = err;
          chunks = [];
        }
      }
    }
    if (failure !== null) throw failure;
    return { partsId, parts, tail: concatBytes(chunks, held), gzBytes };
  }

  async commit(
    document: SnapshotDocument,
    staged: StagedSnapshot,
    meta: SnapshotMeta,
    beforeWrite: BeforeWrite,
    blocks?: StoredBlocks,
  ): Promise<SnapshotHandle> {
    const key = headKey(document, staged.partsId);
    // A shard's block table goes after its gzip, in the same value (the last part): no KV operation
    // of its own to write, read or delete; `get` serves the gzip only (metadata `gzBytes`).
    const table = blocks ? encoder.encode(encodeBlocks(blocks)) : new Uint8Array(0);
    const last = table.byteLength > 0 ? concatBytes([staged.tail, table], staged.tail.byteLength + table.byteLength) : staged.tail;
    const stored = table.byteLength > 0 ? { ...meta, table: table.byteLength } : meta;
    await beforeWrite(key);
    if (staged.partsId === null) {
      await this.#kv.put(key, last, { metadata: stored });
      return key;
    }
    // The tail is the last part (with the table when both fit one: no part over the part size);
    // then the head, which holds no bytes, only their count.
    let parts = staged.parts;
    const put = (bytes: Uint8Array) => this.#kv.put(`${partsPrefix(staged.partsId!)}${parts++}`, bytes);
    if (last.byteLength <= this.#partBytes) {
      if (last.byteLength > 0) await put(last);
    } else {
      await put(staged.tail);
      await put(table);
    }
    await this.#kv.put(key, new Uint8Array(0), { metadata: { ...stored, parts } });
    return key;
  }

  ownedKeys(handle: SnapshotHandle): string[] {
    const parts = partsOf(handle);
    return parts ? [handle, parts] : [handle];
  }

  async withBlocks(handle: SnapshotHandle, maxGzipBytes: number): Promise<{ gzip: Uint8Array; blocks: StoredBlocks } | null> {
    const head = await this.#kv.getWithMetadata<SnapshotMeta>(handle, { type: "arrayBuffer" });
    const meta = head.metadata;
    if (head.value === null || !meta?.table || meta.gzBytes > maxGzipBytes) return null;
    let bytes = new Uint8Array(head.value);
    const prefix = partsOf(handle);
    if (prefix !== null && meta.parts !== undefined) {
      const parts: Uint8Array[] = [];
      for (let i = 0; i < meta.parts; i++) {
        const part = await this.#kv.get(`${prefix}${i}`, { type: "arrayBuffer" });
        if (part === null) return null;
        parts.push(new Uint8Array(part));
      }
      bytes = concatBytes(
        parts,
        parts.reduce((n, p) => n + p.byteLength, 0),
      );
    }
    if (bytes.byteLength !== meta.gzBytes + meta.table) return null;
    const blocks = decodeBlocks(decoder.decode(bytes.subarray(meta.gzBytes)));
    return blocks ? { gzip: bytes.subarray(0, meta.gzBytes), blocks } : null;
  }

  holds(handle: SnapshotHandle, document: SnapshotDocument): boolean {
    return isHeadOf(handle, document);
  }

  async intact(handle: SnapshotHandle): Promise<boolean> {
    const prefix = partsOf(handle);
    if (prefix === null) return true;
    const head = await this.#kv.getWithMetadata<SnapshotMeta>(handle, "arrayBuffer");
    return head.value !== null && (head.metadata?.parts === undefined || (await this.#partsListed(prefix, head.metadata.parts)));
  }

  /** Whether KV lists all `parts` keys under `prefix` (one operation). */
  async #partsListed(prefix: string, parts: number): Promise<boolean> {
    const listed = await this.#kv.list({ prefix, limit: Math.min(1_000, parts + 1) });
    return listed.keys.length >= parts;
  }

  async get(key: string): Promise<ReadableStream<Uint8Array> | null> {
    const head = await this.#kv.getWithMetadata<SnapshotMeta>(key, { type: "stream" });
    if (!head.value) return null;
    const prefix = partsOf(key);
    const parts = head.metadata?.parts;
    // What follows the gzip (a shard's block table) is never served.
    const gzipOnly = (stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> =>
      head.metadata?.table ? stream.pipeThrough(firstBytes(head.metadata.gzBytes)) : stream;
    if (prefix === null || parts === undefined) return gzipOnly(head.value as unknown as ReadableStream<Uint8Array>);
    await head.value.cancel();
    // Every part is listed before answering (one KV operation; only a snapshot in parts pays it), so
    // a part missing here means "absent" and a live render answers, instead of a 200 whose body
    // breaks off. The first part is read before answering too; one lost after this listing (KV
    // showed it, then lost it) still errors the body.
    if (!(await this.#partsListed(prefix, parts))) return null;
    const first = (await this.#kv.get(`${prefix}0`, { type: "stream" })) as ReadableStream<Uint8Array> | null;
    if (!first) return null;
    const kv = this.#kv;
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    (async () => {
      await first.pipeTo(writable, { preventClose: true });
      for (let i = 1; i < parts; i++) {
        const part = (await kv.get(`${prefix}${i}`, { type: "stream" })) as ReadableStream<Uint8Array> | null;
        if (!part) throw new Error(`snapshot part ${i} of ${key} is missing`);
        await part.pipeTo(writable, { preventClose: true });
      }
      await writable.close();
    })().catch((err: unknown) => writable.abort(err).catch(() => undefined));
    return gzipOnly(readable);
  }

  async delete(key: string): Promise<void> {
    const prefix = isPartsPrefix(key) ? key : partsOf(key);
    if (key !== prefix) await this.#kv.delete(key);
    if (prefix === null) return;
    let cursor: string | undefined;
    do {
      const page = await this.#kv.list({ prefix, ...(cursor ? { cursor } : {}) });
      for (const k of page.keys) await this.#kv.delete(k.name);
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
  }

  async storedBytes(origin: string, keys: readonly SnapshotHandle[]): Promise<Map<string, number>> {
    // One listing of the site's heads (metadata included) instead of one read per document.
    const wanted = new Set(keys);
    const out = new Map<string, number>();
    let cursor: string | undefined;
    for (let page = 0; page < STATUS_PAGES && out.size < wanted.size; page++) {
      const listed = await this.#kv.list<SnapshotMeta>({ prefix: siteHeadPrefix(origin), ...(cursor ? { cursor } : {}) });
      for (const k of listed.keys) if (wanted.has(k.name) && k.metadata) out.set(k.name, k.metadata.gzBytes);
      if (listed.list_complete) break;
      cursor = listed.cursor;
    }
    return out;
  }

  /** One KV list of the site's heads (`s1/{origin}/`: the slash ends the origin, so no other site's keys match). */
  async siteHandles(origin: string, limit: number, cursor: string | null): Promise<{ handles: SnapshotHandle[]; next: string | null }> {
    const page = await this.#kv.list({ prefix: siteHeadPrefix(origin), limit, ...(cursor ? { cursor } : {}) });
    return { handles: page.keys.map((k) => k.name), next: page.list_complete ? null : page.cursor };
  }
}
