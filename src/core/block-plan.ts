/**
 * Where a shard's deflate blocks start (issue 53, "blocks"), and what each block holds.
 *
 * A shard is stored as one gzip member made of blocks (core/gzip-blocks.ts) of about BLOCK_ROWS
 * URLs each, so a change re-renders and re-deflates only its block. For that the boundaries must
 * not move when rows come and go: a block's start, once planned, stays (a deletion never shifts a
 * later block; a block whose rows were all deleted stays, empty). Only past the last planned start
 * are new ones cut, every BLOCK_ROWS live rows (the last shard's new records). The manifest keeps
 * the starts (ShardEntry.blockStarts), so the planner, the live render and the regeneration's
 * splice all cut the same rows the same way: BlockCutter is that rule.
 *
 * A shard's content version is made of its blocks' (shardVersion), so a splice that re-reads one
 * block computes the version a full re-plan would, from the other blocks' stored figures.
 */
import { Fingerprint } from "./fingerprint.ts";
import { VIEW_PAGE_ROWS } from "./limits.ts";

/** Live rows per block when new boundaries are cut (as many as a page of the browser view). */
export const BLOCK_ROWS = VIEW_PAGE_ROWS;
/**
 * Live rows a block grows to at most in a live render of an entry's blocks (rows added since it was
 * planned go into its last block): what a render holds at once.
 */
const MAX_BLOCK_ROWS = 2 * BLOCK_ROWS;
/**
 * Live rows a block keeps at least when a shard is planned again: a planned start after fewer is
 * dropped (the block runs on into the next), so deletions never leave a string of small blocks,
 * each paying a deflate block's header (a shard of blocks of ten URLs was 27 % over one stream).
 * The last block is exempt: it fills as records are added.
 */
export const MIN_BLOCK_ROWS = BLOCK_ROWS / 2;

/**
 * Names the stored form of a shard (deflate blocks at these boundaries): part of every shard's
 * version and of the plan's fingerprint, so a change of codec re-renders every shard once and no
 * ETag names bytes of two codecs.
 */
export const BLOCK_CODEC = "gzip-blocks-1";

/**
 * Cuts rows (live ones, in key order) into blocks. A plan (`BlockCutter.plan`: the planner, and
 * the regeneration's render that goes with it) cuts at the previous starts, dropping one reached
 * with fewer than MIN_BLOCK_ROWS rows in the block, and wherever a block reaches BLOCK_ROWS rows
 * (new records past the last start, records moved in from another section): so its blocks hold
 * 500–1,000 rows, the last one 1–1,000, and planning its own result again changes nothing. A
 * render of an entry's own starts (the constructor) cuts at every one and, as no planned block
 * holds more, every MAX_BLOCK_ROWS rows (rows added since the plan: a bounded block however many).
 */
export class BlockCutter {
  readonly #fixed: readonly number[];
  /** Rows a block takes before a cut between planned starts. */
  #limit: number = MAX_BLOCK_ROWS;
  #plan = false;
  #next = 0;
  #inBlock = 0;
  /** Keys starting block 1, 2, … so far (block 0 starts with the shard). */
  readonly starts: number[] = [];

  /** `fixed`: the starts of blocks 1, 2, …, ascending. */
  constructor(fixed: readonly number[]) {
    this.#fixed = fixed;
  }

  /** A cutter that plans from `fixed` (a shard's previous starts): small blocks are merged. */
  static plan(fixed: readonly number[]): BlockCutter {
    const cutter = new BlockCutter(fixed);
    cutter.#plan = true;
    cutter.#limit = BLOCK_ROWS;
    return cutter;
  }

  /** Blocks that end before the live row `key` (0: the row joins the current block); their starts join `starts`. */
  next(key: number): number {
    let cuts = 0;
    let crossed: number | undefined;
    while (this.#next < this.#fixed.length && key >= this.#fixed[this.#next]!) {
      crossed = this.#fixed[this.#next++]!;
      if (this.#plan) continue;
      this.starts.push(crossed);
      cuts++;
    }
    // A plan keeps the last start the row reached, when the block it ends is big enough.
    if (this.#plan && crossed !== undefined && this.#inBlock >= MIN_BLOCK_ROWS) {
      this.starts.push(crossed);
      cuts = 1;
    }
    if (cuts === 0 && this.#inBlock >= this.#limit) {
      this.starts.push(key);
      cuts = 1;
    }
    if (cuts > 0) this.#inBlock = 0;
    this.#inBlock++;
    return cuts;
  }

  /** Where the cutter stands, to go on with later (a plan suspended between steps). */
  state(): BlockCutterState {
    return { fixed: [...this.#fixed], next: this.#next, inBlock: this.#inBlock, starts: [...this.starts], plan: this.#plan };
  }

  static resume(state: BlockCutterState): BlockCutter {
    const cutter = state.plan ? BlockCutter.plan(state.fixed) : new BlockCutter(state.fixed);
    cutter.#next = state.next;
    cutter.#inBlock = state.inBlock;
    cutter.starts.push(...state.starts);
    return cutter;
  }
}

export interface BlockCutterState {
  fixed: number[];
  next: number;
  inBlock: number;
  starts: number[];
  plan?: boolean;
}

/** What the version and the plan need of one block's rows. */
export interface BlockStat {
  /** Key starting the block (block 0: the shard's first live key; not part of the version). */
  start: number;
  /** Live rows. */
  count: number;
  /** Planned `<url>` bytes of the live rows (KeyRow.size summed). */
  bytes: number;
  /** Extension kinds of the live rows (EXT_* bits, or-ed). */
  kinds: number;
  /** Newest change stamp of its rows, tombstones included (0: none). */
  lastChange: number;
  /** Fingerprint state of the live rows' keys and stamps. */
  hash: [number, number];
  /** Fingerprint state of the live rows' keys alone: whether a change kept which keys are live (the view's page starts). */
  keys: [number, number];
}

/** A block's figures accumulated row by row (or going on from a stored `BlockStat`). */
export class BlockAccumulator {
  readonly #stat: BlockStat;
  readonly #fp: Fingerprint;
  readonly #keys: Fingerprint;

  constructor(start: number, from?: BlockStat) {
    this.#stat = from ? { ...from } : { start, count: 0, bytes: 0, kinds: 0, lastChange: 0, hash: [0, 0], keys: [0, 0] };
    this.#fp = from ? Fingerprint.resume(from.hash) : new Fingerprint();
    this.#keys = from ? Fingerprint.resume(from.keys) : new Fingerprint();
  }

  /** Notes a row: a tombstone moves only the change stamp. */
  add(key: number, updatedAt: number, deleted: boolean, size: number, kinds: number): void {
    const stat = this.#stat;
    if (updatedAt > stat.lastChange) stat.lastChange = updatedAt;
    if (deleted) return;
    stat.count++;
    stat.bytes += size;
    stat.kinds |= kinds;
    this.#fp.addNumber(key).addNumber(updatedAt);
    this.#keys.addNumber(key);
  }

  /** The block's figures so far. */
  stat(): BlockStat {
    return { ...this.#stat, hash: this.#fp.state(), keys: this.#keys.state() };
  }
}

/**
 * A shard's content version from its blocks: the render fingerprint, the codec, each block's
 * start (blocks 1, 2, …), live rows and rows' fingerprint, and the count. The same rows cut at
 * other starts are other bytes, so another version.
 */
export function shardVersion(renderFingerprint: string, blocks: readonly BlockStat[]): string {
  const fp = new Fingerprint().addString(renderFingerprint).addString(BLOCK_CODEC);
  let count = 0;
  blocks.forEach((b, i) => {
    if (i > 0) fp.addNumber(b.start);
    fp.addNumber(b.count)
      .addNumber(b.hash[0] >>> 0)
      .addNumber(b.hash[1] >>> 0);
    count += b.count;
  });
  return count === 0 ? "empty" : fp.addNumber(count).digest();
}
