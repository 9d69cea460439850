/** Reading blocks from KV: which block names to read, grouped into bulk gets, fetched one chunk ahead. */

import { yieldToEventLoop } from "../event-loop.ts";
import {
  type BlockEntry,
  type BlockMeta,
  type NamedBlock,
  blockName,
  listBlockNames,
  namedBlock,
  overflowName,
  parseOverflow,
  sitePrefix,
} from "./layout.ts";

/** KV bulk get: ≤ 100 keys, ≤ 25 MB of values. */
const MAX_BULK_KEYS = 100;
/**
 * Bytes of overflow values per bulk get, by their stubs' sizes: far below KV's 25 MB answer and the
 * isolate's 128 MB, whatever the values (one is up to ~2 MiB). A value larger than this, or whose
 * stub does not say its size (a hand-made layout), is read alone.
 */
const OVERFLOW_BYTES_PER_GET = 4 * 1024 * 1024;

/** An overflow value's JSON is at most about twice its `<url>` element (stub `s`), plus field names. */
const overflowEstimate = (stub: BlockEntry): number => (stub.s === undefined ? OVERFLOW_BYTES_PER_GET : 2 * stub.s + 1024);

/**
 * What an overflow stub's value read as: the full entry (change stamp and tombstone from the stub),
 * or why it cannot be used: not found, or holding another change stamp than its stub (one of the
 * two is not yet the other's version in this location: KV makes each key visible on its own).
 */
type OverflowRead = { entry: BlockEntry } | { problem: string };

/** Reads the overflow values of `stubs`, in bulk gets of ≤ 100 keys and ≤ OVERFLOW_BYTES_PER_GET estimated bytes. */
export async function readOverflow(kv: KVNamespace, origin: string, section: string, stubs: readonly BlockEntry[]): Promise<Map<number, OverflowRead>> {
  const out = new Map<number, OverflowRead>();
  let group: BlockEntry[] = [];
  let bytes = 0;
  const flush = async (): Promise<void> => {
    if (group.length === 0) return;
    const names = group.map((e) => overflowName(origin, section, e.k));
    const values = await kv.get(names, "text");
    group.forEach((stub, i) => {
      const name = names[i]!;
      const text = values.get(name);
      if (text === null || text === undefined) {
        out.set(stub.k, { problem: `KV overflow record "${name}" is missing (its block has a stub for key ${stub.k})` });
        return;
      }
      const full = parseOverflow(text, name, stub.k);
      if (full.u !== stub.u) {
        out.set(stub.k, { problem: `KV overflow record "${name}" has change stamp ${full.u}, its block's stub ${stub.u}: not yet the same version` });
        return;
      }
      out.set(stub.k, { entry: { ...full, ...(stub.d ? { d: 1 as const } : {}) } });
    });
    group = [];
    bytes = 0;
  };
  for (const stub of stubs) {
    const size = overflowEstimate(stub);
    if (group.length === MAX_BULK_KEYS || (group.length > 0 && bytes + size > OVERFLOW_BYTES_PER_GET)) await flush();
    group.push(stub);
    bytes += size;
  }
  await flush();
  return out;
}

/**
 * Replaces overflow stubs by their full entries; a value that is missing or of another version
 * than its stub is an error (the request path never renders a mix of versions: docs/kv.md).
 */
export async function withOverflow(kv: KVNamespace, origin: string, section: string, entries: BlockEntry[]): Promise<BlockEntry[]> {
  const stubs = entries.filter((e) => e.v === 1);
  if (stubs.length === 0) return entries;
  const full = await readOverflow(kv, origin, section, stubs);
  return entries.map((e) => {
    if (e.v !== 1) return e;
    const read = full.get(e.k)!;
    if ("problem" in read) throw new Error(read.problem);
    return read.entry;
  });
}

/** Candidate block names of a dense range, by arithmetic: no list() call. */
export async function* directNames(origin: string, section: string, first: number, last: number): AsyncGenerator<NamedBlock[]> {
  const names: NamedBlock[] = [];
  for (let b = first; b <= last; b++) names.push({ name: blockName(origin, section, b) });
  yield names;
}

/** Existing block names of a sparse range (prefix-aligned listing, see listBlockNames). */
export async function* listedNames(kv: KVNamespace, origin: string, section: string, first: number, last: number): AsyncGenerator<NamedBlock[]> {
  for await (const page of listBlockNames(kv, origin, section, first, last)) yield page;
}

/** Every block of a site, in (section, block) order, with sizes from metadata. */
export async function* allBlockNames(kv: KVNamespace, origin: string): AsyncGenerator<NamedBlock[]> {
  const prefix = sitePrefix(origin);
  let cursor: string | undefined;
  for (;;) {
    const page = await kv.list<Partial<BlockMeta>>({ prefix, ...(cursor ? { cursor } : {}) });
    yield page.keys.map((k) => namedBlock(k.name, k.metadata));
    if (page.list_complete) return;
    cursor = page.cursor;
  }
}

/**
 * Groups block names into bulk gets: ≤ 100 keys and ≤ `maxBytes` by metadata sizes; blocks of
 * unknown size count as maxBytes / perGet, so at most `perGet` of them share a get.
 */
export async function* chunked(source: AsyncIterable<NamedBlock[]>, perGet: number, maxBytes: number): AsyncGenerator<string[]> {
  const unknownBytes = Math.ceil(maxBytes / perGet);
  let chunk: string[] = [];
  let bytes = 0;
  for await (const page of source) {
    for (const block of page) {
      const size = block.bytes ?? unknownBytes;
      if (chunk.length > 0 && (chunk.length === MAX_BULK_KEYS || bytes + size > maxBytes)) {
        yield chunk;
        chunk = [];
        bytes = 0;
      }
      chunk.push(block.name);
      bytes += size;
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * Bulk-gets each chunk, keeping the next chunk's read in flight while the caller consumes the
 * current one (KV latency overlaps rendering; memory holds two chunks at most).
 */
export async function* fetchAhead(kv: KVNamespace, chunks: AsyncIterable<string[]>): AsyncGenerator<{ name: string; text: string | null }[]> {
  const iterator = chunks[Symbol.asyncIterator]();
  const fetchNext = async (): Promise<{ name: string; text: string | null }[] | null> => {
    const next = await iterator.next();
    if (next.done) return null;
    const values = await kv.get(next.value, "text");
    return next.value.map((name) => ({ name, text: values.get(name) ?? null }));
  };
  let pending = fetchNext();
  try {
    for (;;) {
      const blocks = await pending;
      if (blocks === null) return;
      pending = fetchNext();
      await yieldToEventLoop(); // the next bulk get leaves before this chunk is consumed
      yield blocks;
    }
  } finally {
    // Abandoned early (client went away): the read in flight is not needed.
    pending.catch(() => {});
    void Promise.resolve(iterator.return?.()).catch(() => {});
  }
}
