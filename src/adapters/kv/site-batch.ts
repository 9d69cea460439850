/**
 * One site's state for one KV write batch: the loc-index buckets, blocks and overflow it read,
 * what it changed, and the writes to make, in phases that keep an interrupted batch safe to retry
 * (see writer.ts). Also how a batch reads KV and finds locs through the loc index.
 */
import { utf8Length } from "../../core/escape.ts";
import { StoreBudgetError } from "../../store/errors.ts";
import { IndexBucket, type IndexValue } from "./index-bucket.ts";
import {
  type BlockEntry,
  type BlockMeta,
  INDEX_BUCKETS,
  KvLayoutError,
  MAX_KV_KEY,
  blockNameOfKey,
  bucketOfHash,
  counterName,
  findEntry,
  idOfHash,
  indexName,
  locHash,
  overflowName,
  parseBlock,
  parseBlockName,
  parseOverflow,
  placeEntry,
  sitePrefix,
} from "./layout.ts";

/** Reads a writer needs. KV in KvRecordWriter; nothing at all for a fresh bulk file. */
export interface Reads {
  getMany(names: readonly string[], perGet: number): Promise<Map<string, string | null>>;
  listNames(prefix: string): Promise<string[]>;
}

/** A key's new value and metadata. */
interface Put {
  value: string;
  metadata?: BlockMeta;
}

export interface Write {
  phase: number;
  name: string;
  /**
   * The key's new value, or null to delete it. Made when the key is written, so a batch holds only
   * the values in flight, never all of its new blocks and buckets at once.
   */
  make(): Put | null;
}

export const PHASE_COUNTER = 0;
const PHASE_INDEX = 1;
const PHASE_OVERFLOW = 2;
const PHASE_BLOCKS = 3;
export const PHASE_REMOVALS = 4;

const BLOCKS_PER_READ = 4;
const BUCKETS_PER_READ = 20;
const OVERFLOW_PER_READ = 20;

/**
 * Loc-index text one batch may load, all its buckets together. A bucket holds ~40 bytes per record
 * of the site over 256 buckets (1.5 MB each at 10,000,000 records): a batch of 100 scattered
 * records on such a site loads ~80 buckets (~120 MB of text). Buckets stay text (index-bucket.ts),
 * so a batch holds about twice this at its peak (the text read, the text written). Past this the
 * batch is refused before loading.
 */
const MAX_INDEX_BYTES_PER_BATCH = 16 * 1024 * 1024;
/** Loc-index bytes per record of the site (`"<16 hex digits>":[key,"section"]`; 37–39 measured). */
const INDEX_BYTES_PER_RECORD = 40;
/**
 * Block text one batch may load. A block holds up to 1,000 entries (~200 KB at ~200 bytes each,
 * up to 4 MB with large entries), and parsed it takes ~1.8 times its text (measured in Node), so a
 * batch touching scattered blocks costs ~0.4 MB each. Block sizes are unknown until read: blocks
 * are read a few at a time and the batch is refused once their text passes this.
 */
const MAX_BLOCK_BYTES_PER_BATCH = 24 * 1024 * 1024;
/** Blocks read at once while loading (two bulk gets): what a batch may read past its budget. */
const BLOCKS_PER_STEP = 2 * BLOCKS_PER_READ;

/** A batch whose loc-index buckets are too large to load together. Nothing was written. */
class KvIndexBudgetError extends StoreBudgetError {
  override readonly name = "KvIndexBudgetError";
  constructor(buckets: number, bucketBytes: number, siteRecords: number) {
    const fit = Math.max(1, Math.floor(MAX_INDEX_BYTES_PER_BATCH / bucketBytes));
    super(
      `this batch touches ${buckets} loc-index buckets of ~${(bucketBytes / 1048576).toFixed(1)} MB each ` +
        `(the site has ~${siteRecords.toLocaleString("en")} records); loading them together would take more memory than a Worker has; ` +
        `nothing was written: send at most ${fit} records per batch to this site`,
    );
  }
}

/** A batch whose blocks are too large to load together. Nothing was written. */
class KvBlockBudgetError extends StoreBudgetError {
  override readonly name = "KvBlockBudgetError";
  constructor(blocks: number, loadedBlocks: number, loadedBytes: number, records: number) {
    const estimate = (loadedBytes / loadedBlocks) * blocks;
    const fit = Math.max(1, Math.floor((records * MAX_BLOCK_BYTES_PER_BATCH) / estimate));
    super(
      `this batch touches ${blocks} blocks of ~${(loadedBytes / loadedBlocks / 1048576).toFixed(2)} MB each; ` +
        `loading them together would take more memory than a Worker has; nothing was written: send at most ${fit} records per batch to this site`,
    );
  }
}

interface Pair {
  k: number;
  s: string;
}

function pairsOf(value: IndexValue | undefined): Pair[] {
  const pairs: Pair[] = [];
  if (!value) return pairs;
  for (let i = 0; i + 1 < value.length; i += 2) {
    const k = value[i];
    const s = value[i + 1];
    if (typeof k === "number" && typeof s === "string") pairs.push({ k, s });
  }
  return pairs;
}

const flatPairs = (pairs: readonly Pair[]): IndexValue => {
  const out: IndexValue = [];
  const seen = new Set<string>();
  for (const p of pairs) {
    const id = `${p.k}${p.s}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(p.k, p.s);
  }
  return out;
};

/** One site's state for one batch: what was read, what changed, what to write. */
export class SiteBatch {
  readonly origin: string;
  readonly #reads: Reads;
  /** Records in the batch, for the advice of a budget error. */
  readonly #records: number;
  readonly buckets = new Map<string, IndexBucket>();
  readonly #blocks = new Map<string, BlockEntry[]>();
  readonly #dirtyBlocks = new Set<string>();
  readonly #overflow = new Map<string, BlockEntry | null>();
  readonly #overflowPuts = new Map<string, string>();
  readonly #overflowDeletes = new Set<string>();
  /** Text length of the blocks loaded so far (UTF-16 units; ~bytes for URLs). */
  #blockBytes = 0;
  #counter: number | undefined;
  #counterDirty = false;

  constructor(origin: string, reads: Reads, records: number) {
    this.origin = origin;
    this.#reads = reads;
    this.#records = records;
  }

  async loadBuckets(ids: Iterable<string>): Promise<void> {
    const names = [...new Set(ids)].filter((id) => !this.buckets.has(id)).map((id) => indexName(this.origin, id));
    if (names.length > 1) {
      // The site's size (its counter) says how large its buckets are, before any is read.
      const siteRecords = (await this.#loadCounter()) - 1;
      const bucketBytes = (siteRecords * INDEX_BYTES_PER_RECORD) / INDEX_BUCKETS;
      if (names.length * bucketBytes > MAX_INDEX_BYTES_PER_BATCH) throw new KvIndexBudgetError(names.length, bucketBytes, siteRecords);
    }
    const values = await this.#reads.getMany(names, BUCKETS_PER_READ);
    for (const name of names) {
      this.buckets.set(name.slice(name.lastIndexOf("#") + 1), new IndexBucket(name, values.get(name) ?? null));
    }
  }

  setIndex(hash: string, pairs: Pair[]): void {
    this.buckets.get(bucketOfHash(hash))!.set(idOfHash(hash), flatPairs(pairs));
  }

  async loadBlocks(names: Iterable<string>): Promise<void> {
    const wanted = [...new Set(names)].filter((n) => !this.#blocks.has(n));
    for (let i = 0; i < wanted.length; i += BLOCKS_PER_STEP) {
      const step = wanted.slice(i, i + BLOCKS_PER_STEP);
      const values = await this.#reads.getMany(step, BLOCKS_PER_READ);
      for (const name of step) {
        const text = values.get(name);
        values.delete(name); // the parsed block replaces its text: let the text go now
        this.#blockBytes += text?.length ?? 0;
        this.#blocks.set(name, text ? parseBlock(text, name, parseBlockName(name, this.origin).block) : []);
      }
      if (this.#blockBytes > MAX_BLOCK_BYTES_PER_BATCH) {
        throw new KvBlockBudgetError(this.#blocks.size + wanted.length - i - step.length, this.#blocks.size, this.#blockBytes, this.#records);
      }
    }
  }

  block(name: string): BlockEntry[] {
    const block = this.#blocks.get(name);
    if (!block) throw new Error(`internal: block ${name} not loaded`);
    return block;
  }

  entry(section: string, key: number): BlockEntry | undefined {
    const block = this.block(blockNameOfKey(this.origin, section, key));
    const i = findEntry(block, key);
    return i >= 0 ? block[i] : undefined;
  }

  /** Full entries (overflow resolved) for the given stubs. */
  async loadOverflow(wanted: readonly Pair[]): Promise<void> {
    const names = wanted.map((p) => overflowName(this.origin, p.s, p.k)).filter((n) => !this.#overflow.has(n));
    const values = await this.#reads.getMany(names, OVERFLOW_PER_READ);
    names.forEach((name) => {
      const text = values.get(name);
      const key = Number(name.slice(name.lastIndexOf("#") + 1));
      this.#overflow.set(name, text ? parseOverflow(text, name, key) : null);
    });
  }

  fullEntry(section: string, entry: BlockEntry): BlockEntry {
    if (entry.v !== 1) return entry;
    const name = overflowName(this.origin, section, entry.k);
    const full = this.#overflow.get(name);
    if (!full) throw new KvLayoutError(name, `overflow record is missing (block has a stub for key ${entry.k})`);
    return { ...full, u: entry.u, ...(entry.d ? { d: 1 as const } : {}) };
  }

  /** Puts an entry (insert or replace) into its section's block, splitting off an overflow value. */
  put(section: string, entry: BlockEntry): void {
    const name = blockNameOfKey(this.origin, section, entry.k);
    const block = this.block(name);
    const { inBlock, overflow } = placeEntry(entry);
    const i = findEntry(block, entry.k);
    const previous = i >= 0 ? block[i] : undefined;
    if (i >= 0) block[i] = inBlock;
    else block.splice(-(i + 1), 0, inBlock);
    this.#dirtyBlocks.add(name);
    const ovName = overflowName(this.origin, section, entry.k);
    if (overflow !== null) {
      this.#overflowPuts.set(ovName, overflow);
      this.#overflowDeletes.delete(ovName);
    } else if (previous?.v === 1) {
      this.#overflowDeletes.add(ovName);
      this.#overflowPuts.delete(ovName);
    }
  }

  /** Removes an entry (a record that moved to another section) and its overflow value. */
  remove(section: string, key: number): void {
    const name = blockNameOfKey(this.origin, section, key);
    const block = this.block(name);
    const i = findEntry(block, key);
    if (i < 0) return;
    if (block[i]!.v === 1) this.#overflowDeletes.add(overflowName(this.origin, section, key));
    block.splice(i, 1);
    this.#dirtyBlocks.add(name);
  }

  /** Marks an entry deleted in place (stub or inline alike). */
  tombstone(section: string, key: number, now: number): void {
    const name = blockNameOfKey(this.origin, section, key);
    const block = this.block(name);
    const i = findEntry(block, key);
    if (i < 0) return;
    block[i] = { ...block[i]!, u: now, d: 1 };
    this.#dirtyBlocks.add(name);
  }

  /** Reserves the next key; derives the counter from the blocks when `c#{origin}` is missing. */
  async allocate(): Promise<number> {
    const key = await this.#loadCounter();
    if (key > MAX_KV_KEY) throw new KvLayoutError(counterName(this.origin), `keys are exhausted (max ${MAX_KV_KEY})`);
    this.#counter = key + 1;
    this.#counterDirty = true;
    return key;
  }

  /** The site's next unused key (`c#{origin}`, or derived from the blocks when it is missing). */
  async #loadCounter(): Promise<number> {
    if (this.#counter === undefined) {
      const name = counterName(this.origin);
      const text = (await this.#reads.getMany([name], 1)).get(name);
      if (text !== null && text !== undefined) {
        const n = Number(text);
        if (!Number.isSafeInteger(n) || n < 1) throw new KvLayoutError(name, `counter must be a positive integer, got "${text.slice(0, 40)}"`);
        this.#counter = n;
      } else {
        this.#counter = (await this.#highestKey()) + 1;
      }
    }
    return this.#counter;
  }

  /** Highest key in any block of the site: the last block of every section. */
  async #highestKey(): Promise<number> {
    const names = await this.#reads.listNames(sitePrefix(this.origin));
    const lastOfSection = new Map<string, string>();
    for (const name of names) lastOfSection.set(parseBlockName(name, this.origin).section, name);
    await this.loadBlocks(lastOfSection.values());
    let max = 0;
    for (const name of lastOfSection.values()) {
      const block = this.block(name);
      if (block.length > 0) max = Math.max(max, block[block.length - 1]!.k);
    }
    return max;
  }

  writes(): Write[] {
    const writes: Write[] = [];
    if (this.#counterDirty) {
      const value = String(this.#counter);
      writes.push({ phase: PHASE_COUNTER, name: counterName(this.origin), make: () => ({ value }) });
    }
    for (const [id, bucket] of this.buckets) {
      if (bucket.dirty) writes.push({ phase: PHASE_INDEX, name: indexName(this.origin, id), make: () => ({ value: bucket.text() }) });
    }
    for (const [name, value] of this.#overflowPuts) writes.push({ phase: PHASE_OVERFLOW, name, make: () => ({ value }) });
    for (const name of this.#dirtyBlocks) {
      const block = this.#blocks.get(name)!;
      if (block.length === 0) {
        writes.push({ phase: PHASE_REMOVALS, name, make: () => null });
        continue;
      }
      const make = (): Put => {
        const value = JSON.stringify(block);
        return { value, metadata: { n: block.length, b: utf8Length(value) } };
      };
      writes.push({ phase: PHASE_BLOCKS, name, make });
    }
    for (const name of this.#overflowDeletes) writes.push({ phase: PHASE_REMOVALS, name, make: () => null });
    return writes;
  }
}

interface Located {
  hash: string;
  pairs: Pair[];
  /** Pairs whose block holds this loc. */
  matches: Pair[];
  /** Pairs whose block lacks the key (a retry after an interrupted write, or a stale pair). */
  vacant: Pair[];
  /** Pairs of other locs that share this 64-bit hash id. */
  collisions: Pair[];
}

/** Finds each loc's entries through the index (reads buckets, then the blocks they point at). */
export async function locate(batch: SiteBatch, locs: readonly string[]): Promise<Located[]> {
  const hashes = locs.map(locHash);
  await batch.loadBuckets(hashes.map(bucketOfHash));
  const located = hashes.map((hash) => {
    const pairs = pairsOf(batch.buckets.get(bucketOfHash(hash))!.get(idOfHash(hash)));
    return { hash, pairs, matches: [] as Pair[], vacant: [] as Pair[], collisions: [] as Pair[] };
  });
  await batch.loadBlocks(located.flatMap((l) => l.pairs.map((p) => blockNameOfKey(batch.origin, p.s, p.k))));
  located.forEach((l, i) => {
    for (const pair of l.pairs) {
      const entry = batch.entry(pair.s, pair.k);
      if (!entry) l.vacant.push(pair);
      else if (entry.loc === locs[i]) l.matches.push(pair);
      else l.collisions.push(pair);
    }
  });
  return located;
}

export async function pool<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

/** Reads from KV, counting the operations they use. */
export function kvReads(kv: KVNamespace, summary: { operations: number }): Reads {
  return {
    getMany: async (names, perGet) => {
      const out = new Map<string, string | null>();
      const chunks: string[][] = [];
      for (let i = 0; i < names.length; i += perGet) chunks.push(names.slice(i, i + perGet));
      const read = async (chunk: string[]): Promise<void> => {
        summary.operations++;
        try {
          for (const [name, value] of await kv.get(chunk, "text")) out.set(name, value);
        } catch (err) {
          // One bulk get answers at most 25 MB: a large site's values (loc-index buckets are ~1.5 MB
          // each at 10,000,000 records) are read again in halves. A failure of one key is a failure.
          if (chunk.length === 1) throw err;
          const half = Math.ceil(chunk.length / 2);
          await read(chunk.slice(0, half));
          await read(chunk.slice(half));
        }
      };
      await pool(chunks, 4, read);
      return out;
    },
    listNames: async (prefix) => {
      const names: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await kv.list({ prefix, ...(cursor ? { cursor } : {}) });
        summary.operations++;
        for (const key of page.keys) names.push(key.name);
        if (page.list_complete) return names;
        cursor = page.cursor;
      }
    },
  };
}
