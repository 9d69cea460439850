/**
 * The KV record reader (URL_SOURCE=kv), in the block layout of layout.ts: what the request path
 * reads. A shard's key range maps straight onto block names, so a 50,000-URL shard costs about 15
 * KV operations (bulk gets of a few blocks each), far below the 1,000 per invocation. The manifest
 * walk (`keyRows`) lists and reads the site's blocks too; a record by loc is asked of the site's
 * writer object, which holds the loc index.
 */
import type { StoredRecord } from "../../core/types.ts";
import type { FoundRecord, KeyRow, RecordReader, ShardRange } from "../../store/port.ts";
import { allBlockNames, chunked, directNames, fetchAhead, listedNames, withOverflow } from "./blocks.ts";
import { originOf } from "./by-origin.ts";
import { type BlockEntry, MAX_KV_KEY, type NamedBlock, blockOf, entryKinds, entrySize, parseBlock, parseBlockName, storedRecord } from "./layout.ts";
import { type SiteWriters, writerOf } from "./object-protocol.ts";

/** Blocks per bulk get when their sizes are unknown (a block of 1,000 long URLs is ~2.5 MB). */
const BLOCKS_PER_GET = 4;
/** Ranges of at most this many blocks are fetched by name; wider (sparse) ranges are listed first. */
const DIRECT_FETCH_MAX_BLOCKS = 64;
/** Bytes per bulk get on the request path (memory stays flat). */
const RECORDS_BYTES_PER_GET = 2 * 1024 * 1024;
/** Bytes per bulk get of a walk over a whole site (key rows, scan, change feed). */
const WALK_BYTES_PER_GET = 8 * 1024 * 1024;

export interface KvReadOptions {
  blocksPerGet?: number;
  directFetchMaxBlocks?: number;
}

export class KvRecordReader implements RecordReader {
  readonly #kv: KVNamespace;
  readonly #writers: SiteWriters;
  readonly #blocksPerGet: number;
  readonly #directMax: number;

  constructor(kv: KVNamespace, writers: SiteWriters, options: KvReadOptions = {}) {
    this.#kv = kv;
    this.#writers = writers;
    this.#blocksPerGet = options.blocksPerGet ?? BLOCKS_PER_GET;
    this.#directMax = options.directFetchMaxBlocks ?? DIRECT_FETCH_MAX_BLOCKS;
  }

  /** KV blocks hold records as JSON objects already: they render through recordPages. */
  readonly rowPages = null;

  async *recordPages(range: ShardRange): AsyncIterable<readonly StoredRecord[]> {
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
        const full = await withOverflow(this.#kv, range.origin, range.section, live);
        if (full.length > 0) yield full.map((entry) => storedRecord(entry, range.section));
      }
    }
  }

  /** Key rows with their extension kinds (the manifest ORs them per shard, as with D1). */
  async *keyRows(origin: string, limit = Number.POSITIVE_INFINITY): AsyncIterable<KeyRow> {
    let left = limit;
    if (left <= 0) return;
    for await (const blocks of fetchAhead(this.#kv, chunked(allBlockNames(this.#kv, origin), this.#blocksPerGet, WALK_BYTES_PER_GET))) {
      for (const { name, text } of blocks) {
        // Deleted between list() and get(): nothing to walk.
        if (text === null) continue;
        const { section, block } = parseBlockName(name, origin);
        for (const entry of parseBlock(text, name, block)) {
          yield { section, key: entry.k, updatedAt: entry.u, deleted: entry.d === 1, size: entrySize(entry), extKinds: entryKinds(entry) };
          // Blocks are read whole (and one bulk get ahead): the limit only ends the walk.
          if (--left <= 0) return;
        }
      }
    }
  }

  /** From the site's writer object: its loc index, as committed. */
  async find(loc: string): Promise<FoundRecord | null> {
    const origin = originOf(loc);
    return origin === null ? null : writerOf(this.#writers, origin).find(origin, loc);
  }
}
