/**
 * KvRecordWriter: batch writes of validated records into the KV layout of layout.ts, with the
 * contract of the port's RecordWriter (src/store/port.ts): upsert by `loc` (a loc's key is assigned once, from the site's
 * counter, and never changes), tombstones on delete, change stamps moved only by a real change.
 *
 * KV has no transactions. Writes go in an order that makes any interrupted batch safe to retry:
 *   1. the counter (keys are reserved before anything uses them; a lost reservation is a gap),
 *   2. loc-index buckets (a new loc is findable before its record exists, so a retry reuses its
 *      key instead of creating a duplicate; a moved record's old section stays listed),
 *   3. overflow records, 4. blocks, 5. removals (old blocks / overflow of moved records).
 * A retry of the same batch repairs whatever step 2–5 left undone and bumps no stamp twice.
 * One writer at a time per site: KV is eventually consistent and has no compare-and-swap, and a
 * key takes one write per second (see docs/kv.md).
 *
 * Costs, in KV operations: reads ≈ touched buckets / 20 + touched blocks / 4 (+ overflow / 100),
 * writes = 1 counter + touched buckets (≤ 256) + touched blocks (+ overflow). A batch of 1,000
 * new records on a site: ~275 operations; a batch of 10 changed records: ~15.
 */
import { utf8Length } from "../../core/escape.ts";
import type { ValidRecord } from "../../core/validate.ts";
import type { DeleteResult, FoundRecord, RecordWriter, UpsertResult } from "../../store/port.ts";
import {
  type BlockEntry,
  type BlockMeta,
  type IndexBucket,
  KvLayoutError,
  MAX_KV_KEY,
  blockNameOfKey,
  bucketOfHash,
  contentText,
  counterName,
  findEntry,
  idOfHash,
  indexName,
  locHash,
  makeEntry,
  overflowName,
  parseBlock,
  parseBlockName,
  parseOverflow,
  placeEntry,
  sitePrefix,
  storedRecord,
} from "./layout.ts";

/** `writes` counts KV writes (puts and deletes). */
export interface KvUpsertResult extends UpsertResult {
  /** KV operations used (a bulk get counts 1). The platform allows 1,000 per invocation. */
  operations: number;
}
export interface KvDeleteResult extends DeleteResult {
  operations: number;
}

/** Reads a writer needs. KV in KvRecordWriter; nothing at all for a fresh bulk file. */
interface Reads {
  getMany(names: readonly string[], perGet: number): Promise<Map<string, string | null>>;
  listNames(prefix: string): Promise<string[]>;
}

interface Write {
  phase: number;
  name: string;
  value: string | null;
  metadata?: BlockMeta;
}

const PHASE_COUNTER = 0;
const PHASE_INDEX = 1;
const PHASE_OVERFLOW = 2;
const PHASE_BLOCKS = 3;
const PHASE_REMOVALS = 4;

const BLOCKS_PER_READ = 4;
const BUCKETS_PER_READ = 20;
const OVERFLOW_PER_READ = 20;

interface Pair {
  k: number;
  s: string;
}

function pairsOf(value: (number | string)[] | undefined): Pair[] {
  const pairs: Pair[] = [];
  if (!value) return pairs;
  for (let i = 0; i + 1 < value.length; i += 2) {
    const k = value[i];
    const s = value[i + 1];
    if (typeof k === "number" && typeof s === "string") pairs.push({ k, s });
  }
  return pairs;
}

const flatPairs = (pairs: readonly Pair[]): (number | string)[] => {
  const out: (number | string)[] = [];
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
class SiteBatch {
  readonly origin: string;
  readonly #reads: Reads;
  readonly buckets = new Map<string, IndexBucket>();
  readonly #dirtyBuckets = new Set<string>();
  readonly #blocks = new Map<string, BlockEntry[]>();
  readonly #dirtyBlocks = new Set<string>();
  readonly #overflow = new Map<string, BlockEntry | null>();
  readonly #overflowPuts = new Map<string, string>();
  readonly #overflowDeletes = new Set<string>();
  #counter: number | undefined;
  #counterDirty = false;

  constructor(origin: string, reads: Reads) {
    this.origin = origin;
    this.#reads = reads;
  }

  async loadBuckets(ids: Iterable<string>): Promise<void> {
    const names = [...new Set(ids)].filter((id) => !this.buckets.has(id)).map((id) => indexName(this.origin, id));
    const values = await this.#reads.getMany(names, BUCKETS_PER_READ);
    for (const name of names) {
      const id = name.slice(name.lastIndexOf("#") + 1);
      const text = values.get(name);
      let bucket: IndexBucket = {};
      if (text) {
        try {
          bucket = JSON.parse(text) as IndexBucket;
        } catch {
          throw new KvLayoutError(name, "loc-index bucket is not JSON");
        }
      }
      this.buckets.set(id, bucket);
    }
  }

  setIndex(hash: string, pairs: Pair[]): void {
    const bucketId = bucketOfHash(hash);
    const bucket = this.buckets.get(bucketId)!;
    const next = flatPairs(pairs);
    const id = idOfHash(hash);
    if (JSON.stringify(bucket[id] ?? []) === JSON.stringify(next)) return;
    bucket[id] = next;
    this.#dirtyBuckets.add(bucketId);
  }

  async loadBlocks(names: Iterable<string>): Promise<void> {
    const wanted = [...new Set(names)].filter((n) => !this.#blocks.has(n));
    const values = await this.#reads.getMany(wanted, BLOCKS_PER_READ);
    for (const name of wanted) {
      const text = values.get(name);
      this.#blocks.set(name, text ? parseBlock(text, name, parseBlockName(name, this.origin).block) : []);
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
    const key = this.#counter;
    if (key > MAX_KV_KEY) throw new KvLayoutError(counterName(this.origin), `keys are exhausted (max ${MAX_KV_KEY})`);
    this.#counter += 1;
    this.#counterDirty = true;
    return key;
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
    if (this.#counterDirty) writes.push({ phase: PHASE_COUNTER, name: counterName(this.origin), value: String(this.#counter) });
    for (const id of this.#dirtyBuckets) {
      writes.push({ phase: PHASE_INDEX, name: indexName(this.origin, id), value: JSON.stringify(this.buckets.get(id)) });
    }
    for (const [name, value] of this.#overflowPuts) writes.push({ phase: PHASE_OVERFLOW, name, value });
    for (const name of this.#dirtyBlocks) {
      const block = this.#blocks.get(name)!;
      if (block.length === 0) {
        writes.push({ phase: PHASE_REMOVALS, name, value: null });
        continue;
      }
      const value = JSON.stringify(block);
      writes.push({ phase: PHASE_BLOCKS, name, value, metadata: { n: block.length, b: utf8Length(value) } });
    }
    for (const name of this.#overflowDeletes) writes.push({ phase: PHASE_REMOVALS, name, value: null });
    return writes;
  }
}


interface Counts {
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  alreadyDeleted: number;
  notFound: number;
}

const noCounts = (): Counts => ({ inserted: 0, updated: 0, unchanged: 0, deleted: 0, alreadyDeleted: 0, notFound: 0 });

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
async function locate(batch: SiteBatch, locs: readonly string[]): Promise<Located[]> {
  const hashes = locs.map(locHash);
  await batch.loadBuckets(hashes.map(bucketOfHash));
  const located = hashes.map((hash) => {
    const pairs = pairsOf(batch.buckets.get(bucketOfHash(hash))![idOfHash(hash)]);
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

async function planUpsert(batch: SiteBatch, input: readonly ValidRecord[], stampOf: (i: number) => number): Promise<Counts> {
  const counts = noCounts();
  // Last occurrence of a loc wins (validation rejects duplicates anyway).
  const byLoc = new Map<string, number>();
  input.forEach((r, i) => byLoc.set(r.loc, i));
  const indexes = [...byLoc.values()].sort((a, b) => a - b);
  const records = indexes.map((i) => input[i]!);
  const located = await locate(batch, records.map((r) => r.loc));

  // Keys: existing ones from the index; new locs reuse a vacant key (interrupted earlier write) or
  // get the next one from the counter, in input order.
  const keys: number[] = [];
  for (let i = 0; i < records.length; i++) {
    const l = located[i]!;
    const primary = l.matches.find((m) => m.s === records[i]!.section) ?? l.matches[0];
    keys.push(primary?.k ?? l.vacant[0]?.k ?? (await batch.allocate()));
  }
  await batch.loadBlocks(records.map((r, i) => blockNameOfKey(batch.origin, r.section, keys[i]!)));
  await batch.loadOverflow(
    located.flatMap((l) => l.matches.filter((m) => batch.entry(m.s, m.k)?.v === 1)),
  );

  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const l = located[i]!;
    const key = keys[i]!;
    const now = stampOf(indexes[i]!);
    const primary = l.matches.find((m) => m.s === record.section) ?? l.matches[0];
    const removals = l.matches.filter((m) => m !== primary && m.s !== record.section);
    if (primary) {
      const old = batch.fullEntry(primary.s, batch.entry(primary.s, key)!);
      const same = primary.s === record.section && old.d !== 1 && contentText(old) === contentText(record);
      // As with D1: a tombstone brought back counts as inserted (it was absent from the sitemaps).
      if (old.d === 1) counts.inserted++;
      else if (same) counts.unchanged++;
      else counts.updated++;
      if (!same) {
        batch.put(record.section, makeEntry(record, key, now));
        if (primary.s !== record.section) removals.push(primary);
      }
    } else {
      const clash = batch.entry(record.section, key);
      if (clash && clash.loc !== record.loc) {
        throw new KvLayoutError(counterName(batch.origin), `key ${key} is already used by another loc: the counter is behind the blocks`);
      }
      batch.put(record.section, makeEntry(record, key, now));
      counts.inserted++;
    }
    for (const r of removals) batch.remove(r.s, r.k);
    // The old sections stay in the index until their removal is written (see the header).
    batch.setIndex(l.hash, [{ k: key, s: record.section }, ...removals, ...l.collisions]);
  }
  return counts;
}

async function planDelete(batch: SiteBatch, locs: readonly string[], now: number): Promise<Counts> {
  const counts = noCounts();
  const located = await locate(batch, locs);
  for (const l of located) {
    let deleted = false;
    for (const m of l.matches) {
      if (batch.entry(m.s, m.k)!.d === 1) continue;
      batch.tombstone(m.s, m.k, now);
      deleted = true;
    }
    if (deleted) counts.deleted++;
    else if (l.matches.length > 0) counts.alreadyDeleted++;
    else counts.notFound++;
  }
  return counts;
}

function originOf(loc: string): string | null {
  try {
    return new URL(loc).origin;
  } catch {
    return null;
  }
}

function groupBy<T>(items: readonly T[], originOfItem: (item: T) => string | null): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const origin = originOfItem(item);
    if (origin === null) continue;
    const list = groups.get(origin) ?? [];
    list.push(item);
    groups.set(origin, list);
  }
  return groups;
}

async function pool<T>(items: readonly T[], concurrency: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

/** Reads from KV, counting the operations they use. */
function kvReads(kv: KVNamespace, summary: { operations: number }): Reads {
  return {
    getMany: async (names, perGet) => {
      const out = new Map<string, string | null>();
      const chunks: string[][] = [];
      for (let i = 0; i < names.length; i += perGet) chunks.push(names.slice(i, i + perGet));
      summary.operations += chunks.length;
      await pool(chunks, 4, async (chunk) => {
        for (const [name, value] of await kv.get(chunk, "text")) out.set(name, value);
      });
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

/** The stored record of a normalised loc, tombstone or not, found through the loc index; null when never stored. */
export async function findRecord(kv: KVNamespace, loc: string): Promise<FoundRecord | null> {
  const origin = originOf(loc);
  if (origin === null) return null;
  const batch = new SiteBatch(origin, kvReads(kv, { operations: 0 }));
  const [l] = await locate(batch, [loc]);
  const match = l!.matches[0];
  if (!match) return null;
  await batch.loadOverflow([match]);
  const entry = batch.fullEntry(match.s, batch.entry(match.s, match.k)!);
  return { ...storedRecord(entry, match.s), origin, deleted: entry.d === 1 };
}

export interface KvWriterOptions {
  /** KV writes in flight at once. */
  concurrency?: number;
  /**
   * Most KV operations one call may use (reads and writes). The platform allows 1,000 per Worker
   * invocation; a batch that would need more is refused after its reads and before any write.
   */
  maxOperations?: number;
}

/** A batch that would need more KV operations than one invocation may use. Nothing was written. */
export class KvBudgetError extends Error {
  override readonly name = "KvBudgetError";
  readonly operations: number;
  readonly limit: number;
  constructor(operations: number, limit: number, records: number) {
    const fit = Math.max(1, Math.floor((records * limit) / operations / 2));
    super(
      `this batch needs ${operations} KV operations, more than the ${limit} one Worker invocation may use; ` +
        `nothing was written: send smaller batches (about ${fit} records of this kind)`,
    );
    this.operations = operations;
    this.limit = limit;
  }
}

export class KvRecordWriter implements RecordWriter {
  readonly #kv: KVNamespace;
  readonly #concurrency: number;
  readonly #maxOperations: number;

  constructor(kv: KVNamespace, options: KvWriterOptions = {}) {
    this.#kv = kv;
    this.#concurrency = options.concurrency ?? 16;
    this.#maxOperations = options.maxOperations ?? 1000;
  }

  /** Upserts validated records: inserts new locs, updates changed ones, leaves equal ones alone. */
  async upsert(records: readonly ValidRecord[], now = Date.now()): Promise<KvUpsertResult> {
    const { counts, rowsWritten, operations } = await this.#run(groupBy(records, (r) => r.origin), (batch, group) =>
      planUpsert(batch, group, () => now),
    );
    const { inserted, updated, unchanged } = counts;
    return { atomic: false, writes: rowsWritten, inserted, updated, unchanged, operations };
  }

  /** Marks locs deleted (tombstones); unknown or already deleted locs are no-ops. */
  async delete(locs: readonly string[], now = Date.now()): Promise<KvDeleteResult> {
    const distinct = [...new Set(locs)];
    const { counts, rowsWritten, operations } = await this.#run(groupBy(distinct, originOf), (batch, group) => planDelete(batch, group, now));
    // Locs that are not URLs at all were never stored either.
    const notFound = distinct.length - counts.deleted - counts.alreadyDeleted;
    return { atomic: false, writes: rowsWritten, deleted: counts.deleted, alreadyDeleted: counts.alreadyDeleted, notFound, operations };
  }

  async #run<T>(
    groups: Map<string, T[]>,
    plan: (batch: SiteBatch, group: T[]) => Promise<Counts>,
  ): Promise<{ counts: Counts; rowsWritten: number; operations: number }> {
    const counts = noCounts();
    const summary = { rowsWritten: 0, operations: 0 };
    const reads = kvReads(this.#kv, summary);
    // Plan every site first (reads only), so a batch over the budget writes nothing at all.
    const planned: Write[][] = [];
    let records = 0;
    for (const [origin, group] of groups) {
      const batch = new SiteBatch(origin, reads);
      const siteCounts = await plan(batch, group);
      for (const key of Object.keys(counts) as (keyof Counts)[]) counts[key] += siteCounts[key];
      planned.push(batch.writes());
      records += group.length;
    }
    const needed = summary.operations + planned.reduce((n, w) => n + w.length, 0);
    if (needed > this.#maxOperations) throw new KvBudgetError(needed, this.#maxOperations, records);
    for (const writes of planned) {
      for (let phase = PHASE_COUNTER; phase <= PHASE_REMOVALS; phase++) {
        await pool(
          writes.filter((w) => w.phase === phase),
          this.#concurrency,
          (w) => (w.value === null ? this.#kv.delete(w.name) : this.#kv.put(w.name, w.value, w.metadata ? { metadata: w.metadata } : {})),
        );
      }
      summary.rowsWritten += writes.length;
      summary.operations += writes.length;
    }
    return { counts, ...summary };
  }
}

/** One item of a `wrangler kv bulk put` file. */
export interface KvBulkEntry {
  key: string;
  value: string;
  metadata?: BlockMeta;
}

export interface BulkOptions {
  /** Change stamp of the i-th record (ms); default: one `Date.now()` for all. */
  stampOf?: (index: number) => number;
}

const EMPTY_READS: Reads = {
  getMany: async () => new Map(),
  listNames: async () => [],
};

/**
 * The complete KV contents (blocks, overflow, loc index, counters) for validated records on an
 * EMPTY namespace, as a `wrangler kv bulk put` file: keys 1, 2, 3, … per site in input order.
 * The same code path as KvRecordWriter.upsert, so a later upsert through the writer (the admin API)
 * finds every loc and keeps its key.
 */
export async function kvBulkEntries(records: readonly ValidRecord[], options: BulkOptions = {}): Promise<KvBulkEntry[]> {
  const now = Date.now();
  const stampOf = options.stampOf ?? (() => now);
  const entries: KvBulkEntry[] = [];
  const indexed = records.map((record, index) => ({ record, index }));
  for (const [origin, group] of groupBy(indexed, (r) => r.record.origin)) {
    const batch = new SiteBatch(origin, EMPTY_READS);
    await planUpsert(
      batch,
      group.map((g) => g.record),
      (i) => stampOf(group[i]!.index),
    );
    for (const w of batch.writes()) {
      if (w.value === null) continue;
      entries.push(w.metadata ? { key: w.name, value: w.value, metadata: w.metadata } : { key: w.name, value: w.value });
    }
  }
  return entries;
}
