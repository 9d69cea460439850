/**
 * The Workers KV layout of URL records (URL_SOURCE=kv). Everything that knows a KV key name or a
 * KV value format lives here; docs/kv.md describes the same layout for people who fill it with
 * `wrangler kv bulk put`.
 *
 * Keys (all in the `URLS` namespace; `#` never occurs in an origin or a section name and sorts
 * below every character a section may contain, so KV's byte order equals D1's (section, key)
 * order):
 *
 *   r#{origin}#{section}#{block}   a BLOCK: the records whose stable key k has floor(k / 1000) =
 *                                  block, zero-padded to 9 digits (keys < 10^12). Value: a JSON
 *                                  array of entries sorted by k (format below); metadata
 *                                  {"n": entries, "b": value bytes} (optional; lets readers size
 *                                  their bulk reads). A shard's key range maps straight onto
 *                                  block names (the boundary keys the manifest already stores),
 *                                  so reading a shard lists nothing before it; only sparse ranges
 *                                  list, and then by prefixes aligned to powers of ten.
 *   v#{origin}#{section}#{key}     OVERFLOW: one record whose entry JSON is over 4,096 bytes (big
 *                                  extension data), key zero-padded to 12 digits; its block holds a
 *                                  stub with `"v": 1`. Keeps every block ≤ ~4 MB (KV values ≤ 25 MiB).
 *   c#{origin}                     COUNTER of earlier versions (whose writers kept the loc index,
 *                                  `l#{origin}#{hh}`, and the counter in KV): read once when the
 *                                  site's writer object adopts the site (adopt.ts), never written.
 *   m#{origin}                     MANIFEST (only with MANIFEST_STORE=kv): the ShardManifest as JSON.
 *   a#{origin}                     LOAD RECORD of a bulk load (bulk.ts): {"blocks", "entries", "values"},
 *                                  how many blocks, block entries and overflow values the load
 *                                  wrote. The writer object adopts a load only once it has read
 *                                  all of them (adopt.ts); never written by the object.
 *
 * A block entry: {"k": key, "u": change stamp (ms), "s"?: UTF-8 bytes of the <url> element (computed
 * when absent), "d"?: 1 for a tombstone, "loc", "lastmod"?, "changefreq"?, "priority"?, "ext"?,
 * "v"?: 1 when the full entry lives in the overflow key, "x"?: extension kinds, in such stubs}.
 *
 * Why blocks rather than one key per record (with the record in list() metadata): every KV write
 * is one operation, billed and rate-limited as such, and a Worker gets 1,000 operations per
 * invocation. One key per record means 126,000 writes to load the demo set (twice that with a loc
 * index; ~5 minutes against local KV, more than the Free plan's 1,000 writes a day), a 50,000-URL
 * shard of 50+ list() calls (plus bulk gets for records too big for metadata), and a manifest
 * walk that hits the operation limit at ~1,000,000 records. Blocks load the demo set in ~390
 * writes, serve a full shard in ~14 reads and walk 10,000,000 records within the limit. The loc
 * index, the counter and the change feed live in each site's writer object (site-db.ts), which
 * projects blocks from its rows (projection.ts); readers need only what is here.
 */

import { z } from "zod";
import { utf8Length } from "../../core/escape.ts";
import { extKindsOf } from "../../core/extensions/kinds.ts";
import type { RecordExtensions } from "../../core/extensions/types.ts";
import { SECTION_PATTERN } from "../../core/limits.ts";
import { StoredContentSchema } from "../../core/record/stored.ts";
import type { Changefreq, StoredRecord } from "../../core/types.ts";
import { urlElementBytes } from "../../core/writers.ts";

/** Stable keys are 1 … 10^12 − 1. */
const KEY_DIGITS = 12;
export const MAX_KV_KEY = 10 ** KEY_DIGITS - 1;
/** Keys per block. 1,000 keeps a block of ordinary records near 200 KB and a 50,000-URL shard at 50 blocks. */
export const BLOCK_SPAN = 1000;
const BLOCK_DIGITS = KEY_DIGITS - 3;
/** Entries whose JSON is larger than this move to an overflow key (keeps blocks ≤ ~4 MB). */
const MAX_INLINE_ENTRY_BYTES = 4096;
/** Separator: absent from origins and section names, and below "-", "0"–"9", "_" and "a"–"z". */
const SEP = "#";

export interface BlockEntry {
  k: number;
  u: number;
  s?: number;
  d?: 1;
  loc: string;
  lastmod?: string;
  changefreq?: Changefreq;
  priority?: number;
  ext?: RecordExtensions;
  /** Overflow stubs only: extension kinds (EXT_* bits) of the full entry, for the manifest walk. */
  x?: number;
  v?: 1;
}

/** Metadata of a block key (returned by list()). */
export interface BlockMeta {
  n: number;
  b: number;
}

/** A block's key name and, when its metadata says, its value size. */
export interface NamedBlock {
  name: string;
  bytes?: number;
}

export function namedBlock(name: string, metadata: Partial<BlockMeta> | null | undefined): NamedBlock {
  return typeof metadata?.b === "number" ? { name, bytes: metadata.b } : { name };
}

/** A record or key in KV that does not follow this layout. Names the KV key. */
class KvLayoutError extends Error {
  override readonly name = "KvLayoutError";
  readonly kvKey: string;
  constructor(kvKey: string, message: string) {
    super(`KV layout error in "${kvKey}": ${message}`);
    this.kvKey = kvKey;
  }
}

const pad = (n: number, digits: number): string => String(n).padStart(digits, "0");

export const sitePrefix = (origin: string): string => `r${SEP}${origin}${SEP}`;
const sectionPrefix = (origin: string, section: string): string => `${sitePrefix(origin)}${section}${SEP}`;
export const blockOf = (key: number): number => Math.floor(key / BLOCK_SPAN);
export const blockName = (origin: string, section: string, block: number): string => sectionPrefix(origin, section) + pad(block, BLOCK_DIGITS);
export const overflowName = (origin: string, section: string, key: number): string => `v${SEP}${origin}${SEP}${section}${SEP}${pad(key, KEY_DIGITS)}`;
export const counterName = (origin: string): string => `c${SEP}${origin}`;
export const manifestName = (origin: string): string => `m${SEP}${origin}`;
export const loadName = (origin: string): string => `a${SEP}${origin}`;

/** What a bulk load wrote for one site (its load record, `a#{origin}`). */
export interface LoadRecord {
  blocks: number;
  entries: number;
  values: number;
}

const count = z.number().int().min(0);
const LoadRecordSchema = z.object({ blocks: count, entries: count, values: count });

/** A load record's value, or a KvLayoutError naming the key. */
export function parseLoadRecord(text: string, kvKey: string): LoadRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new KvLayoutError(kvKey, "value is not JSON");
  }
  const parsed = LoadRecordSchema.safeParse(raw);
  if (!parsed.success) throw new KvLayoutError(kvKey, 'a load record is {"blocks", "entries", "values"}: three counts');
  return parsed.data;
}

/** Section and block number of a block key name under `sitePrefix(origin)`, or a KvLayoutError. */
export function parseBlockName(name: string, origin: string): { section: string; block: number } {
  const prefix = sitePrefix(origin);
  const rest = name.startsWith(prefix) ? name.slice(prefix.length) : "";
  const sep = rest.lastIndexOf(SEP);
  const section = rest.slice(0, sep);
  const digits = rest.slice(sep + 1);
  if (sep <= 0 || !SECTION_PATTERN.test(section) || digits.length !== BLOCK_DIGITS || !/^\d+$/.test(digits)) {
    throw new KvLayoutError(name, `not a block key (expected r${SEP}{origin}${SEP}{section}${SEP}{9-digit block})`);
  }
  return { section, block: Number(digits) };
}

/** One message per field, whatever the issue: the first one names the entry's problem. */
const says = (message: string) => ({ error: () => message });
const KEY = says(`"k" must be an integer key from 1 to ${MAX_KV_KEY}`);
const STAMP = says(`"u" (change stamp, ms) must be a non-negative number`);
const SIZE = says(`"s" must be a byte count`);
const KINDS = says(`"x" must be extension kind bits`);

/** A block entry: the layout's own fields first (their messages come first), then the stored record content of src/core/record. */
const BlockEntrySchema = z.looseObject(
  {
    k: z.number(KEY).int(KEY).min(1, KEY).max(MAX_KV_KEY, KEY),
    u: z.number(STAMP).min(0, STAMP),
    s: z.number(SIZE).int(SIZE).min(0, SIZE).optional(),
    d: z.literal(1, says(`"d" must be 1 (tombstone) or absent`)).optional(),
    v: z.literal(1, says(`"v" must be 1 (overflow) or absent`)).optional(),
    x: z.number(KINDS).int(KINDS).min(0, KINDS).optional(),
    ...StoredContentSchema.shape,
  },
  says("must be a JSON object"),
);

/**
 * Checks one entry's shape (not the sitemap rules: writers validate records before writing).
 * Catches hand-made data that would otherwise render a broken document.
 */
function checkEntry(value: unknown, kvKey: string, position: number): BlockEntry {
  const result = BlockEntrySchema.safeParse(value);
  if (!result.success) throw new KvLayoutError(kvKey, `entry ${position}: ${result.error.issues[0]!.message}`);
  return value as BlockEntry; // the entry itself, not zod's copy: blocks are read back and rewritten as they are
}

/** Parses a block value: a JSON array of entries with keys inside the block, strictly ascending. */
export function parseBlock(text: string, kvKey: string, block: number): BlockEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new KvLayoutError(kvKey, "value is not JSON");
  }
  if (!Array.isArray(raw)) throw new KvLayoutError(kvKey, "value must be a JSON array of entries");
  const low = block * BLOCK_SPAN;
  const high = low + BLOCK_SPAN - 1;
  let previous = 0;
  for (let i = 0; i < raw.length; i++) {
    const entry = checkEntry(raw[i], kvKey, i);
    if (entry.k < low || entry.k > high) throw new KvLayoutError(kvKey, `entry ${i}: key ${entry.k} is outside this block (${low}–${high})`);
    if (entry.k <= previous) throw new KvLayoutError(kvKey, `entry ${i}: keys must be strictly ascending (${entry.k} after ${previous})`);
    previous = entry.k;
  }
  return raw as BlockEntry[];
}

/** Parses an overflow value: one full entry for the expected key. */
export function parseOverflow(text: string, kvKey: string, key: number): BlockEntry {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new KvLayoutError(kvKey, "value is not JSON");
  }
  const entry = checkEntry(raw, kvKey, 0);
  if (entry.k !== key) throw new KvLayoutError(kvKey, `holds key ${entry.k}, expected ${key}`);
  return entry;
}

/** The sitemap content of a record (what must change for a change stamp to move). */
export interface RecordContent {
  loc: string;
  lastmod?: string | null;
  changefreq?: Changefreq | null;
  priority?: number | null;
  ext?: RecordExtensions | null;
}

/** Canonical text of a record's content: equal text ⇔ identical rendering. */
export function contentText(content: RecordContent): string {
  const ext = content.ext && Object.keys(content.ext).length > 0 ? content.ext : null;
  return JSON.stringify([content.loc, content.lastmod ?? null, content.changefreq ?? null, content.priority ?? null, ext]);
}

/** An entry for a record; nulls are left out. */
export function makeEntry(content: RecordContent, key: number, updatedAt: number, deleted = false): BlockEntry {
  const entry: BlockEntry = { k: key, u: updatedAt, s: urlElementBytes(content), loc: content.loc };
  if (deleted) entry.d = 1;
  if (content.lastmod) entry.lastmod = content.lastmod;
  if (content.changefreq) entry.changefreq = content.changefreq;
  if (content.priority !== null && content.priority !== undefined) entry.priority = content.priority;
  if (content.ext && Object.keys(content.ext).length > 0) entry.ext = content.ext;
  return entry;
}

/** Splits an entry into what the block holds and, when too big, the overflow value. */
export function placeEntry(entry: BlockEntry): { inBlock: BlockEntry; overflow: string | null } {
  const json = JSON.stringify(entry);
  // ≤ 3 UTF-8 bytes per UTF-16 unit: most entries pass the first test without counting.
  if (json.length * 3 <= MAX_INLINE_ENTRY_BYTES || utf8Length(json) <= MAX_INLINE_ENTRY_BYTES) return { inBlock: entry, overflow: null };
  const stub: BlockEntry = { k: entry.k, u: entry.u, loc: entry.loc, v: 1 };
  if (entry.s !== undefined) stub.s = entry.s;
  if (entry.d) stub.d = 1;
  const kinds = extKindsOf(entry.ext);
  if (kinds) stub.x = kinds;
  return { inBlock: stub, overflow: json };
}

/** Size of the entry's `<url>` element: stored by writers, computed for hand-made entries. */
export function entrySize(entry: BlockEntry): number {
  return entry.s ?? urlElementBytes(entry);
}

/** Extension kinds of an entry (stubs carry them, inline entries have their `ext`). */
export function entryKinds(entry: BlockEntry): number {
  return entry.x ?? extKindsOf(entry.ext);
}

/** The record the renderer gets. */
export function storedRecord(entry: BlockEntry, section: string): StoredRecord {
  const record: StoredRecord = {
    key: entry.k,
    section,
    loc: entry.loc,
    lastmod: entry.lastmod ?? null,
    changefreq: entry.changefreq ?? null,
    priority: entry.priority ?? null,
    ext: entry.ext ?? null,
    updatedAt: entry.u,
  };
  return record;
}

/**
 * Block names of one section from `first` to `last` (block numbers, inclusive) that exist, in
 * order, without listing the blocks before `first`: KV list() has a prefix and a cursor but no
 * "start after", so the range is walked as decimal-aligned groups (a group of 10^j blocks shares
 * a 9−j digit prefix), taking at each step the largest group that starts exactly there. At most
 * 9 groups per digit position are visited before groups grow past `last`, and listing stops at the
 * first block past `last`: ≤ ~80 list() calls of overhead however sparse the range, plus one per
 * 1,000 existing blocks.
 */
export async function* listBlockNames(kv: KVNamespace, origin: string, section: string, first: number, last: number): AsyncGenerator<NamedBlock[]> {
  const prefix = sectionPrefix(origin, section);
  let p = Math.max(0, first);
  while (p <= last) {
    let j = 0;
    while (j < BLOCK_DIGITS && p % 10 ** (j + 1) === 0) j++;
    const groupPrefix = prefix + pad(p, BLOCK_DIGITS).slice(0, BLOCK_DIGITS - j);
    let cursor: string | undefined;
    for (;;) {
      const page = await kv.list<Partial<BlockMeta>>({ prefix: groupPrefix, ...(cursor ? { cursor } : {}) });
      const names: NamedBlock[] = [];
      let past = false;
      for (const key of page.keys) {
        const block = Number(key.name.slice(prefix.length));
        if (!Number.isInteger(block)) continue;
        if (block > last) {
          past = true;
          break;
        }
        if (block >= first) names.push(namedBlock(key.name, key.metadata));
      }
      if (names.length > 0) yield names;
      if (past) return;
      if (page.list_complete) break;
      cursor = page.cursor;
    }
    p += 10 ** j;
  }
}
