/**
 * KvUrlSource: URL records read from Workers KV (URL_SOURCE=kv), in the block layout of
 * kv-layout.ts. A shard's key range maps straight onto block names, so a 50,000-URL shard costs
 * about 15 KV operations (bulk gets of a few blocks each), far below the 1,000 per invocation.
 */
import type { StoredRecord } from "../core/types.ts";
import {
  BLOCK_SPAN,
  type BlockEntry,
  type BlockMeta,
  type NamedBlock,
  MAX_KV_KEY,
  blockName,
  blockOf,
  entryKinds,
  entrySize,
  listBlockNames,
  namedBlock,
  overflowName,
  parseBlock,
  parseBlockName,
  parseOverflow,
  sitePrefix,
  storedRecord,
} from "./kv-layout.ts";
import type { RangeScanner, ScanPosition, ScannedRecord } from "../regen/source.ts";
import type { KeyRow, ShardRange, UrlSource } from "./source.ts";

/** Blocks per bulk get when their sizes are unknown (a block of 1,000 long URLs is ~2.5 MB). */
export const BLOCKS_PER_GET = 4;
/** Ranges of at most this many blocks are fetched by name; wider (sparse) ranges are listed first. */
export const DIRECT_FETCH_MAX_BLOCKS = 64;
/** KV bulk get: ≤ 100 keys, ≤ 25 MB of values. */
const MAX_BULK_KEYS = 100;
/** Bytes per bulk get on the request path (memory stays flat) and in the manifest walk. */
const RECORDS_BYTES_PER_GET = 2 * 1024 * 1024;
const WALK_BYTES_PER_GET = 8 * 1024 * 1024;

export interface KvSourceOptions {
  blocksPerGet?: number;
  directFetchMaxBlocks?: number;
}

/** (section, key) order, as D1 sorts (byte order of ASCII section names). */
function before(section: string, key: number, position: ScanPosition): boolean {
  return section < position.section || (section === position.section && key < position.key);
}

export class KvUrlSource implements UrlSource, RangeScanner {
  readonly #kv: KVNamespace;
  readonly #blocksPerGet: number;
  readonly #directMax: number;

  constructor(kv: KVNamespace, options: KvSourceOptions = {}) {
    this.#kv = kv;
    this.#blocksPerGet = options.blocksPerGet ?? BLOCKS_PER_GET;
    this.#directMax = options.directFetchMaxBlocks ?? DIRECT_FETCH_MAX_BLOCKS;
  }

  async *records(range: ShardRange): AsyncIterable<StoredRecord> {
    const firstKey = Math.max(1, range.firstKey);
    const lastKey = Math.min(MAX_KV_KEY, range.lastKey);
    if (lastKey < firstKey) return;
    const first = blockOf(firstKey);
    const last = blockOf(lastKey);
    const names: AsyncIterable<NamedBlock[]> =
      last - first + 1 <= this.#directMax
        ? directNames(range.origin, range.section, first, last)
        : listedNames(this.#kv, range.origin, range.section, first, last);
    for await (const blocks of fetchAhead(this.#kv, chunked(names, this.#blocksPerGet, RECORDS_BYTES_PER_GET))) {
      for (const { name, text } of blocks) {
        if (text === null) continue;
        const entries = parseBlock(text, name, parseBlockName(name, range.origin).block);
        const live: BlockEntry[] = [];
        for (const entry of entries) {
          if (entry.k < firstKey) continue;
          if (entry.k > lastKey) break;
          if (entry.d !== 1) live.push(entry);
        }
        const full = await this.#withOverflow(range.origin, range.section, live);
        for (const entry of full) yield storedRecord(entry, range.section);
      }
    }
  }

  /** Key rows with their extension kinds (the manifest ORs them per shard, as with D1). */
  async *keyRows(origin: string): AsyncIterable<KeyRow & { extKinds: number }> {
    for await (const blocks of fetchAhead(this.#kv, chunked(allBlockNames(this.#kv, origin), this.#blocksPerGet, WALK_BYTES_PER_GET))) {
      for (const { name, text } of blocks) {
        // Deleted between list() and get(): nothing to walk.
        if (text === null) continue;
        const { section, block } = parseBlockName(name, origin);
        for (const entry of parseBlock(text, name, block)) {
          yield { section, key: entry.k, updatedAt: entry.u, deleted: entry.d === 1, size: entrySize(entry), extKinds: entryKinds(entry) };
        }
      }
    }
  }

  /**
   * The regeneration's one-pass read (src/regen/source.ts): every record from `from` to `until`
   * (inclusive) in (section, key) order, tombstones included, content resolved for live ones.
   * Lists the site's block names (one list() per 1,000 blocks, i.e. per 1,000,000 records) and
   * bulk-gets only the blocks that overlap the span.
   */
  async *scan(origin: string, from: ScanPosition, until: ScanPosition | null): AsyncIterable<ScannedRecord> {
    const wanted = async function* (pages: AsyncIterable<NamedBlock[]>): AsyncGenerator<NamedBlock[]> {
      for await (const page of pages) {
        const keep: NamedBlock[] = [];
        for (const block of page) {
          const { section, block: n } = parseBlockName(block.name, origin);
          if (before(section, (n + 1) * BLOCK_SPAN - 1, from)) continue;
          if (until && before(until.section, until.key, { section, key: n * BLOCK_SPAN })) {
            if (keep.length > 0) yield keep;
            return;
          }
          keep.push(block);
        }
        if (keep.length > 0) yield keep;
      }
    };
    for await (const blocks of fetchAhead(this.#kv, chunked(wanted(allBlockNames(this.#kv, origin)), this.#blocksPerGet, WALK_BYTES_PER_GET))) {
      for (const { name, text } of blocks) {
        if (text === null) continue;
        const { section, block } = parseBlockName(name, origin);
        const inSpan = parseBlock(text, name, block).filter(
          (e) => !before(section, e.k, from) && !(until && before(until.section, until.key, { section, key: e.k })),
        );
        const live = await this.#withOverflow(origin, section, inSpan.filter((e) => e.d !== 1));
        const full = new Map(live.map((e) => [e.k, e]));
        for (const entry of inSpan) {
          const e = full.get(entry.k) ?? entry;
          yield { ...storedRecord(e, section), deleted: entry.d === 1, size: entrySize(entry), extKinds: entryKinds(entry) };
        }
      }
    }
  }

  /** Replaces overflow stubs by their full entries (bulk gets of ≤ 100 keys and ≤ ~16 MB). */
  async #withOverflow(origin: string, section: string, entries: BlockEntry[]): Promise<BlockEntry[]> {
    const stubs = entries.filter((e) => e.v === 1);
    if (stubs.length === 0) return entries;
    const full = new Map<number, BlockEntry>();
    let group: BlockEntry[] = [];
    let bytes = 0;
    const flush = async (): Promise<void> => {
      if (group.length === 0) return;
      const names = group.map((e) => overflowName(origin, section, e.k));
      const values = await this.#kv.get(names, "text");
      group.forEach((stub, i) => {
        const text = values.get(names[i]!);
        if (text === null || text === undefined) throw new Error(`KV overflow record "${names[i]}" is missing (its block has a stub for key ${stub.k})`);
        full.set(stub.k, { ...parseOverflow(text, names[i]!, stub.k), u: stub.u, ...(stub.d ? { d: 1 as const } : {}) });
      });
      group = [];
      bytes = 0;
    };
    for (const stub of stubs) {
      const size = 2 * entrySize(stub) + 1024;
      if (group.length === MAX_BULK_KEYS || (group.length > 0 && bytes + size > 16 * 1024 * 1024)) await flush();
      group.push(stub);
      bytes += size;
    }
    await flush();
    return entries.map((e) => (e.v === 1 ? full.get(e.k)! : e));
  }
}

/** Candidate block names of a dense range, by arithmetic: no list() call. */
async function* directNames(origin: string, section: string, first: number, last: number): AsyncGenerator<NamedBlock[]> {
  const names: NamedBlock[] = [];
  for (let b = first; b <= last; b++) names.push({ name: blockName(origin, section, b) });
  yield names;
}

/** Existing block names of a sparse range (prefix-aligned listing, see listBlockNames). */
async function* listedNames(kv: KVNamespace, origin: string, section: string, first: number, last: number): AsyncGenerator<NamedBlock[]> {
  for await (const page of listBlockNames(kv, origin, section, first, last)) yield page;
}

/** Every block of a site, in (section, block) order, with sizes from metadata. */
async function* allBlockNames(kv: KVNamespace, origin: string): AsyncGenerator<NamedBlock[]> {
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
async function* chunked(source: AsyncIterable<NamedBlock[]>, perGet: number, maxBytes: number): AsyncGenerator<string[]> {
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
async function* fetchAhead(kv: KVNamespace, chunks: AsyncIterable<string[]>): AsyncGenerator<{ name: string; text: string | null }[]> {
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
      yield blocks;
    }
  } finally {
    // Abandoned early (client went away): the read in flight is not needed.
    pending.catch(() => {});
    void Promise.resolve(iterator.return?.()).catch(() => {});
  }
}
