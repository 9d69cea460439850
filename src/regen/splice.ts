/**
 * A changed shard re-rendered block by block (issue 53, "blocks"): instead of reading all its rows
 * and gzipping all its bytes again, a run reads the rows of the blocks its changes fall in (about
 * BLOCK_ROWS each), renders and deflates those blocks, re-deflates the block after each (its
 * dictionary changed; its bytes come back from the stored file) and copies every other block's
 * deflated bytes from the stored file. The stored block table (src/snapshots/store.ts
 * StoredBlocks) gives the other blocks' figures, so the new entry — counts, kinds, version — is
 * exactly what a pass over every row would plan (the planner's rule, core/block-plan.ts), and the
 * file exactly what rendering it whole gives (test/workers/splice.test.ts checks both).
 *
 * Whatever a splice cannot do the way a pass would (no stored table or file visible here, too many
 * changed blocks, a shard that would split, shrink its last block to nothing or change its head's
 * namespaces) it declines, and the caller re-plans the shard with a pass: never a different result.
 */
import { BLOCK_ROWS, BlockAccumulator, BlockCutter, type BlockStat, MIN_BLOCK_ROWS, shardVersion } from "../core/block-plan.ts";
import { type BlockLayout, type DeflatedBlock, blockSpans, gzipOfBlocks, spliceFile, trailerMatches } from "../core/gzip-blocks.ts";
import { recordsSlice } from "../core/shard-blocks.ts";
import type { UrlRecord } from "../core/types.ts";
import { SHARD_EXTENSIONS } from "../core/writers.ts";
import type { ShardEntry } from "../manifest/manifest.ts";
import { renderOptions } from "../sitemaps.ts";
import { zlibBlockDeflate } from "../snapshots/block-deflate.ts";
import type { StoredBlocks } from "../snapshots/store.ts";
import type { RangeScan } from "../store/port.ts";
import type { Run } from "./run.ts";

/** Changed blocks a splice re-renders at most; a shard with more is re-rendered whole (as cheap by then). */
const SPLICE_MAX_BLOCKS = 16;
/**
 * Stored gzip bytes a splice takes on at most: it holds the old file and the new one (a shard of
 * barely compressible URLs can be ~38 MB gzip; a 128 MB isolate must not hold two).
 */
const SPLICE_MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Live rows of a changed block a splice reads at most (a bulk append is planned by a pass, which may split the shard). */
const SPLICE_MAX_LAST_ROWS = 5 * BLOCK_ROWS;

/** One block of the new file: re-rendered from its rows, or an old block kept (copied, or re-deflated). */
type FreshBlock = { stat: BlockStat; records: UrlRecord[]; head: boolean; tail: boolean };
type NewBlock = FreshBlock | { stat: BlockStat; old: number };

/**
 * One changed key per changed block of `entry` (what the next run needs to splice it), or none
 * when more blocks changed than a splice takes (the shard is then re-planned whole).
 */
export function oneKeyPerBlock(entry: ShardEntry, keys: readonly number[]): number[] {
  if (entry.blockStarts === undefined) return [];
  const byBlock = new Map<number, number>();
  for (const key of keys) byBlock.set(blockOf(entry.blockStarts, key), key);
  return byBlock.size > SPLICE_MAX_BLOCKS ? [] : [...byBlock.values()];
}

/** The block of `key`: how many block starts are at or below it. */
function blockOf(boundaries: readonly number[], key: number): number {
  let lo = 0;
  let hi = boundaries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (boundaries[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Splices the published shard `entry` (whose range ends at `end`; undefined: open-ended) for the
 * changed keys `changed`. true: done (the draft holds the new entry); false: declined (nothing was
 * changed; the caller runs a pass).
 */
export async function spliceShard(run: Run, scanner: RangeScan, entry: ShardEntry, end: number | undefined, changed: readonly number[]): Promise<boolean> {
  const { deps } = run;
  // A stamp-ordered feed notes the rows a run scans (Run.track): only a pass does that.
  if (!entry.snapshot || entry.urlCount === 0 || run.track !== null || entry.blockStarts === undefined) return false;
  const boundaries = entry.blockStarts;
  const touched = [...new Set(changed.map((k) => blockOf(boundaries, k)))].sort((a, b) => a - b);
  if (touched.length === 0 || touched.length > SPLICE_MAX_BLOCKS) return false;
  const stored = await deps.snapshots.withBlocks(entry.snapshot, SPLICE_MAX_FILE_BYTES);
  if (!stored) return false;
  const table = stored.blocks;
  if (table.version !== entry.version || table.blocks.length !== boundaries.length + 1) return false;
  if (boundaries.some((b, i) => table.blocks[i + 1]!.start !== b)) return false;
  const spans = blockSpans(
    stored.gzip,
    table.blocks.map((b) => b.deflatedBytes),
  );
  // The table must describe these very bytes: their layout, and the trailer its CRC-32s make.
  if (!spans || !trailerMatches(stored.gzip, table.blocks)) return false;

  const read = await readBlocks(run, scanner, entry, end, boundaries, table, touched);
  if (!read) return false;
  const blocks: NewBlock[] = [];
  for (let j = 0; j < table.blocks.length; j++) blocks.push(...(read.fresh.get(j) ?? [{ stat: table.blocks[j]!, old: j }]));
  const stats = blocks.map((b) => b.stat);
  const count = stats.reduce((n, s) => n + s.count, 0);
  const bytes = stats.reduce((n, s) => n + s.bytes, run.limits.overheadBytes);
  const kinds = stats.reduce((k, s) => k | s.kinds, 0);
  // What a pass would do otherwise: split the shard, drop an emptied last block, declare other namespaces.
  if (count === 0 || count > run.limits.maxUrls || bytes > run.limits.maxBytes) return false;
  if (blocks.length > 1 && stats[stats.length - 1]!.count === 0) return false;
  // A pass merges a block left under MIN_BLOCK_ROWS into the next (core/block-plan.ts): so must this.
  if (blocks.some((b, t) => "records" in b && t < blocks.length - 1 && b.stat.count < MIN_BLOCK_ROWS)) return false;
  if ((kinds & SHARD_EXTENSIONS) !== ((entry.extKinds ?? 0) & SHARD_EXTENSIONS)) return false;

  const version = shardVersion(run.build.renderFingerprint, stats);
  // The rows changed back to what the snapshot holds: it stays.
  const unchanged = version === entry.version;
  const rawLastChange = stats.reduce((t, s) => Math.max(t, s.lastChange), 0);
  // The planner's rule (manifest.ts #close): Last-Modified moves whenever the content does.
  const lastChange = unchanged
    ? Math.max(rawLastChange, entry.lastChange)
    : rawLastChange <= entry.lastChange
      ? Math.max(run.now, entry.lastChange + 1)
      : rawLastChange;
  // The view's page starts stay exact while the same keys are live (changed records, none added or
  // deleted); otherwise they would need every later row, and the view reads the version once instead.
  const sameKeys = touched.every((j) => {
    const fresh = read.fresh.get(j)!;
    const old = table.blocks[j]!;
    return fresh.length === 1 && fresh[0]!.stat.count === old.count && fresh[0]!.stat.keys.every((k, i) => k === old.keys[i]);
  });
  const { pageStarts: _pages, ...kept } = entry;
  const next: ShardEntry = {
    ...kept,
    ...(sameKeys && entry.pageStarts ? { pageStarts: entry.pageStarts } : {}),
    lastKey: end ?? Math.max(entry.lastKey, read.maxKey),
    urlCount: count,
    byteCount: bytes,
    lastChange,
    version,
    extKinds: kinds,
    blockStarts: stats.slice(1).map((s) => s.start),
    snapshot: unchanged ? entry.snapshot : null,
  };
  const deflated = unchanged ? null : spliced(run, entry, read.fresh, spans, table);
  if (!unchanged && deflated === null) return false;
  // Counted once past every decline (a declined shard is counted by the pass that plans it instead).
  run.counters.shardsChecked++;
  run.draft.replace(entry.section, entry.firstKey, end ?? Number.POSITIVE_INFINITY, [next]);
  if (deflated === null) {
    run.counters.shardsUnchanged++;
    return true;
  }
  run.counters.shardsSpliced++;
  run.counters.blocksRendered += blocks.filter((b) => "records" in b).length;
  try {
    const doc = await run.snapshots.stageGzip(gzipOfBlocks(deflated.blocks), deflated.layouts);
    await run.commitShard(next, doc, stats);
  } catch (err) {
    run.fail(next, err);
  }
  return true;
}

/**
 * The rows of the changed blocks, cut as the planner would cut them (every BLOCK_ROWS rows, so a
 * block grown by records moved in or appended is cut in parts); null: declined.
 */
async function readBlocks(
  run: Run,
  scanner: RangeScan,
  entry: ShardEntry,
  end: number | undefined,
  boundaries: readonly number[],
  table: StoredBlocks,
  touched: readonly number[],
): Promise<{ fresh: Map<number, FreshBlock[]>; maxKey: number } | null> {
  const last = table.blocks.length - 1;
  const fresh = new Map<number, FreshBlock[]>();
  let maxKey = entry.firstKey;
  for (const i of touched) {
    const lo = i === 0 ? entry.firstKey : boundaries[i - 1]!;
    const hi = i === last ? (end ?? Number.MAX_SAFE_INTEGER) : boundaries[i]! - 1;
    // The planner's cuts inside this block (core/block-plan.ts): its rows alone, no planned start among them.
    const cutter = BlockCutter.plan([]);
    let acc = new BlockAccumulator(table.blocks[i]!.start);
    const records: UrlRecord[][] = [[]];
    const stats: BlockStat[] = [];
    let live = 0;
    for await (const row of scanner.scan(run.origin, { section: entry.section, key: lo }, { section: entry.section, key: hi })) {
      run.counters.rowsRead++;
      maxKey = Math.max(maxKey, row.key);
      if (!row.deleted && cutter.next(row.key) > 0) {
        stats.push(acc.stat());
        acc = new BlockAccumulator(row.key);
        records.push([]);
      }
      acc.add(row.key, row.updatedAt, row.deleted, row.size, row.extKinds);
      if (row.deleted) continue;
      records[records.length - 1]!.push(row);
      if (++live > SPLICE_MAX_LAST_ROWS) return null;
    }
    stats.push(acc.stat());
    fresh.set(
      i,
      stats.map((stat, k) => ({ stat, records: records[k]!, head: i === 0 && k === 0, tail: i === last && k === stats.length - 1 })),
    );
  }
  return { fresh, maxKey };
}

/** The new file's blocks: the changed blocks rendered from their rows, spliced into the stored ones (core/gzip-blocks.ts). */
function spliced(
  run: Run,
  entry: ShardEntry,
  fresh: ReadonlyMap<number, FreshBlock[]>,
  spans: readonly Uint8Array[],
  table: StoredBlocks,
): { blocks: DeflatedBlock[]; layouts: BlockLayout[] } | null {
  const options = { ...renderOptions(run.deps.config, run.origin), namespaces: (entry.extKinds ?? 0) & SHARD_EXTENSIONS };
  const replaced = new Map<number, Uint8Array[]>();
  for (const [j, blocks] of fresh)
    replaced.set(
      j,
      blocks.map((b) => recordsSlice(b.records, b, options)),
    );
  return spliceFile(spans, table.blocks, replaced, zlibBlockDeflate);
}
