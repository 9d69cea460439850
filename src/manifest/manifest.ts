/**
 * The shard manifest: how each site section is cut into sitemap files.
 *
 * Each shard is a contiguous range of the stable key. Boundaries, once made, never move: new
 * records get larger keys and land in the last shard (or a new one), so earlier full shards keep
 * their bytes and their caches. A shard that would pass a limit is split at the record that
 * would break it; the new part gets a new number, so no existing shard URL is renumbered. A shard
 * whose records were all deleted stays in the manifest with no URLs (its range may fill again) but
 * is never listed and answers 404.
 */
import { BlockAccumulator, BlockCutter, type BlockCutterState, type BlockStat, shardVersion } from "../core/block-plan.ts";
import { Fingerprint } from "../core/fingerprint.ts";
import { VIEW_PAGE_ROWS } from "../core/limits.ts";
import type { KeyRow } from "../store/port.ts";

export interface ShardEntry {
  section: string;
  /** Number in the shard's URL; assigned once. */
  n: number;
  firstKey: number;
  lastKey: number;
  urlCount: number;
  /** Uncompressed bytes of the rendered urlset (full datetimes: an upper bound). */
  byteCount: number;
  /** Newest change stamp in the range (ms), tombstones included; never goes backwards. */
  lastChange: number;
  /** Content version: changes whenever the rendered bytes would. */
  version: string;
  /**
   * Extension kinds (EXT_* bits) of the shard's live records: the namespaces its `<urlset>` head
   * declares. Absent (0) when the source does not report kinds.
   */
  extKinds?: number;
  /**
   * Stable key of the first live record of each page of the browser view (VIEW_PAGE_ROWS records a
   * page): page N is the key range [pageStarts[N-1], pageStarts[N]), read without touching the rows
   * before it. Fixed by the live keys, so by the version. Absent in manifests built before it, and
   * after a splice changed which keys are live (src/regen/splice.ts: the view then reads the
   * version once, as for those; the next pass plans them again).
   */
  pageStarts?: number[];
  /**
   * Where the shard's deflate blocks 1, 2, … start (block 0 starts with the shard): planned once
   * and kept (src/core/block-plan.ts), so the stored gzip and the live render cut the same blocks
   * and a change re-renders its own. Part of the version. Absent in manifests planned before it
   * (the page starts were then the plan: `plannedBlockStarts`).
   */
  blockStarts?: number[];
  /**
   * Key of the pre-rendered gzip bytes of exactly this version (src/snapshots), or absent/null when
   * none is stored yet (the shard is then rendered live). Carried over while the version is unchanged.
   */
  snapshot?: string | null;
}

/** What the planner needs of a row: a key row whose extension kinds may be unknown (0). */
export type PlanRow = Omit<KeyRow, "extKinds"> & { extKinds?: number };

export interface ShardManifest {
  origin: string;
  /** Version of the whole set: the index's content version. */
  version: string;
  builtAt: number;
  /** Key of the pre-rendered gzip bytes of the index of this version (src/snapshots), if stored. */
  snapshot?: string | null;
  /** Every shard, in (section, firstKey) order, including empty ones. */
  shards: ShardEntry[];
  /** A partitioned site's partition count when its partitions' manifests were merged: its index's shard links carry it (src/partitions/pinned.ts). */
  partitions?: number;
  /**
   * Published by a site's first regeneration pass before the pass reached the end of its rows
   * (src/regen/publish.ts): it lists only the shards planned so far, so a request treats it as no
   * manifest yet (src/sitemaps.ts `currentManifest`). Absent once a pass has covered every row.
   */
  partial?: boolean;
}

/**
 * A regeneration's publish names the site's lease it holds (src/regen/lease.ts). Where the lease
 * lives beside the manifest (D1) the save checks it in its own transaction and, when another run
 * has taken the lease since, writes nothing and throws LeaseLostError: a run that lost its lease
 * (a step's retry took it back while the step still ran) never publishes over the newer run's
 * manifest. A KV manifest store cannot check it in the same write, and does not.
 */
export interface ManifestFence {
  leaseId: string;
}

export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
}

/** Where manifests live. D1 by default: the manifest is the strongly consistent pointer readers follow. */
export interface ManifestStore {
  load(origin: string): Promise<ShardManifest | null>;
  /** Atomic replace: readers see the old manifest or the new one, never a mix. */
  save(manifest: ShardManifest, fence?: ManifestFence): Promise<void>;
}

export interface PlanLimits {
  maxUrls: number;
  maxBytes: number;
  /** Bytes of a urlset without any `<url>`. */
  overheadBytes: number;
}

/** A shard's counts while it is being filled (what a suspended plan keeps of it, with its fingerprint's state). */
interface OpenCounts {
  n: number;
  firstKey: number;
  maxKey: number;
  count: number;
  bytes: number;
  lastChange: number;
  extKinds: number;
  /** The first live key of each page of the browser view. */
  pageStarts: number[];
  /** The blocks closed so far. */
  blocks: BlockStat[];
}

interface OpenShard extends OpenCounts {
  cutter: BlockCutter;
  /** The block being filled. */
  block: BlockAccumulator;
  previous: ShardEntry | undefined;
}

/** A section's plan stopped between two rows (JSON), to go on with in a later step: `SectionPlanner.resume`. */
export interface SuspendedSection {
  section: string;
  /** The number the next new shard takes. */
  nextN: number;
  /** The shard being filled: its counts so far, its blocks and where its cutter stands. */
  open: (OpenCounts & { block: BlockStat; cutter: BlockCutterState }) | null;
}

/**
 * Plans one section's shards from its rows in key order, keeping the previous boundaries.
 * Push-based so one walk over a whole site can feed one planner per section.
 */
export class SectionPlanner {
  readonly #section: string;
  readonly #limits: PlanLimits;
  readonly #renderFingerprint: string;
  readonly #now: number;
  readonly #previous: ShardEntry[];
  readonly #done: ShardEntry[] = [];
  /** Each closed shard's blocks (by number): what its snapshot's block table records (src/regen). */
  readonly blocks = new Map<number, BlockStat[]>();
  #nextPrevious = 0;
  #nextN: number;
  #current: OpenShard | undefined;

  /**
   * `nextN`: the smallest number a new shard may take. A planner given only part of a section's
   * shards (the regeneration re-plans one shard's range) must not reuse the numbers of the others.
   */
  constructor(section: string, previous: readonly ShardEntry[], limits: PlanLimits, renderFingerprint: string, now: number, nextN = 1) {
    this.#section = section;
    this.#limits = limits;
    this.#renderFingerprint = renderFingerprint;
    this.#now = now;
    this.#previous = [...previous].sort((a, b) => a.firstKey - b.firstKey);
    this.#nextN = Math.max(nextN, this.#previous.reduce((max, s) => Math.max(max, s.n), 0) + 1);
    if (this.#previous.length > 0) this.#openPrevious();
  }

  /**
   * Where the plan stands, to be resumed in a later step (a walk too long for one invocation: a
   * move's new partition, src/manifest/build.ts `planStep`). The shards closed so far are `closed`,
   * taken by the caller; the resumed planner goes on with the shard being filled as if it had never
   * stopped. Only a plan with no previous shards (a fresh plan) stops this way.
   */
  suspend(): SuspendedSection {
    if (this.#previous.length > 0) throw new Error("only a plan without previous shards can be suspended");
    const shard = this.#current;
    return {
      section: this.#section,
      nextN: this.#nextN,
      open: shard
        ? {
            n: shard.n,
            firstKey: shard.firstKey,
            maxKey: shard.maxKey,
            count: shard.count,
            bytes: shard.bytes,
            lastChange: shard.lastChange,
            extKinds: shard.extKinds,
            pageStarts: [...shard.pageStarts],
            blocks: [...shard.blocks],
            block: shard.block.stat(),
            cutter: shard.cutter.state(),
          }
        : null,
    };
  }

  /** The planner `suspend()` described, with none of its closed shards: they were taken then. */
  static resume(state: SuspendedSection, limits: PlanLimits, renderFingerprint: string, now: number): SectionPlanner {
    const planner = new SectionPlanner(state.section, [], limits, renderFingerprint, now, state.nextN);
    const open = state.open;
    if (open) {
      const { block, cutter, ...counts } = open;
      planner.#current = {
        ...counts,
        blocks: [...open.blocks],
        pageStarts: [...open.pageStarts],
        cutter: BlockCutter.resume(cutter),
        block: new BlockAccumulator(block.start, block),
        previous: undefined,
      };
    }
    return planner;
  }

  /** The section planned. */
  get section(): string {
    return this.#section;
  }

  /** Whether a shard is being filled (false before the first row of a plan with no previous shards). */
  get hasOpenShard(): boolean {
    return this.#current !== undefined;
  }

  /** Number of the shard being filled, if any. */
  get openShardNumber(): number | undefined {
    return this.#current?.n;
  }

  /** The shards closed so far, in key order. */
  get closed(): readonly ShardEntry[] {
    return this.#done;
  }

  /**
   * Whether `add(row)` would end the shard being filled: the row crosses into the next previous
   * shard, or would break a limit (a split). Lets a caller that renders while planning finish the
   * current document first.
   */
  startsNewShard(row: PlanRow): boolean {
    const next = this.#previous[this.#nextPrevious];
    if (next && row.key >= next.firstKey) return true;
    const shard = this.#current;
    if (!shard) return true;
    return !row.deleted && (shard.count >= this.#limits.maxUrls || shard.bytes + row.size > this.#limits.maxBytes);
  }

  /**
   * Stops the plan before `row`, which starts a new shard (see startsNewShard), leaving the rest
   * of the range for a later pass: the shard being filled is closed, and a new shard that `row`
   * would have opened is kept as an empty placeholder, so its number and first key are fixed for
   * the pass that fills it. Previous shards not reached are not returned (they stay as they were).
   * `rangeEnd`: the last key of the range planned (placeholder's last key when no previous shard
   * follows); default `row.key`.
   */
  stopBefore(row: PlanRow, rangeEnd?: number): { shards: ShardEntry[]; resumeKey: number } {
    const next = this.#previous[this.#nextPrevious];
    if (next && row.key >= next.firstKey) {
      this.#close(next.firstKey - 1);
      return { shards: this.#done, resumeKey: next.firstKey };
    }
    this.#close(row.key - 1);
    this.#done.push({
      section: this.#section,
      n: this.#nextN++,
      firstKey: row.key,
      lastKey: next ? next.firstKey - 1 : Math.max(rangeEnd ?? row.key, row.key),
      urlCount: 0,
      byteCount: this.#limits.overheadBytes,
      lastChange: 0,
      version: "empty",
      extKinds: 0,
      pageStarts: [],
      snapshot: null,
    });
    return { shards: this.#done, resumeKey: row.key };
  }

  add(row: PlanRow): void {
    // Cross every previous boundary at or before this key (empty ranges close with no URLs).
    while (this.#nextPrevious < this.#previous.length && row.key >= this.#previous[this.#nextPrevious]!.firstKey) {
      this.#close(this.#previous[this.#nextPrevious]!.firstKey - 1);
      this.#openPrevious();
    }
    // The first shard of a new section starts at key 0, so any key that later moves in is covered.
    let shard = this.#current ?? this.#open(0, this.#nextN++, undefined);
    if (!row.deleted && (shard.count >= this.#limits.maxUrls || shard.bytes + row.size > this.#limits.maxBytes)) {
      this.#close(row.key - 1);
      shard = this.#open(row.key, this.#nextN++, undefined);
    }
    shard.maxKey = Math.max(shard.maxKey, row.key);
    shard.lastChange = Math.max(shard.lastChange, row.updatedAt);
    const cuts = row.deleted ? 0 : shard.cutter.next(row.key);
    for (let i = cuts; i > 0; i--) {
      shard.blocks.push(shard.block.stat());
      shard.block = new BlockAccumulator(shard.cutter.starts[shard.cutter.starts.length - i]!);
    }
    shard.block.add(row.key, row.updatedAt, row.deleted, row.size, row.extKinds ?? 0);
    if (row.deleted) return;
    if (shard.count % VIEW_PAGE_ROWS === 0) shard.pageStarts.push(row.key);
    shard.count++;
    shard.bytes += row.size;
    if (row.extKinds) shard.extKinds |= row.extKinds;
  }

  /**
   * Closes the plan; previous shards that saw no rows are kept, empty. `lastKey`: where the last
   * shard ends when the rows planned were a range followed by other shards (default: the largest
   * key seen or the previous end, whichever is larger).
   */
  finish(lastKey?: number): ShardEntry[] {
    while (this.#nextPrevious < this.#previous.length) {
      this.#close(this.#previous[this.#nextPrevious]!.firstKey - 1);
      this.#openPrevious();
    }
    const last = this.#current;
    if (last) this.#close(lastKey ?? Math.max(last.maxKey, last.previous?.lastKey ?? last.firstKey));
    return this.#done;
  }

  #openPrevious(): void {
    const previous = this.#previous[this.#nextPrevious++]!;
    this.#open(previous.firstKey, previous.n, previous);
  }

  #open(firstKey: number, n: number, previous: ShardEntry | undefined): OpenShard {
    this.#current = {
      n,
      firstKey,
      maxKey: firstKey,
      count: 0,
      bytes: this.#limits.overheadBytes,
      lastChange: 0,
      extKinds: 0,
      pageStarts: [],
      blocks: [],
      // A planned shard keeps its blocks' starts (a deletion never shifts a later block).
      cutter: BlockCutter.plan(plannedBlockStarts(previous)),
      block: new BlockAccumulator(firstKey),
      previous,
    };
    return this.#current;
  }

  #close(lastKey: number): void {
    const shard = this.#current;
    if (!shard) return;
    this.#current = undefined;
    // The live records' keys and stamps, their blocks (plus render options) fix the bytes; the
    // range's last key does not: a full last shard whose range closes when a successor opens keeps
    // its version (and its ETag, caches and snapshot).
    const blocks = [...shard.blocks, shard.block.stat()];
    const version = shardVersion(this.#renderFingerprint, blocks);
    this.blocks.set(shard.n, blocks);
    let lastChange = shard.lastChange;
    // Last-Modified must move whenever the content does, even when no stamp in the range moved
    // (a record that changed section, say): then the build time is the change time.
    if (shard.previous) {
      if (shard.previous.version === version) lastChange = Math.max(lastChange, shard.previous.lastChange);
      else if (lastChange <= shard.previous.lastChange) lastChange = Math.max(this.#now, shard.previous.lastChange + 1);
    }
    this.#done.push({
      section: this.#section,
      n: shard.n,
      firstKey: shard.firstKey,
      lastKey,
      urlCount: shard.count,
      byteCount: shard.bytes,
      lastChange,
      version,
      extKinds: shard.extKinds,
      pageStarts: shard.pageStarts,
      blockStarts: shard.count === 0 ? [] : shard.cutter.starts,
      // Snapshots are per version: one stored for this version stays valid.
      snapshot: shard.previous?.version === version ? (shard.previous.snapshot ?? null) : null,
    });
  }
}

/** Shards that are served and listed: those with at least one URL. */
export function listedShards(manifest: ShardManifest): ShardEntry[] {
  return manifest.shards.filter((s) => s.urlCount > 0);
}

/** A listed shard (one with at least one URL); `emptyToo`: an entry emptied since, too (a link listed before a move's flip, src/http/shard-reading.ts). */
export function findShard(manifest: ShardManifest, section: string, n: number, emptyToo = false): ShardEntry | undefined {
  return manifest.shards.find((s) => s.section === section && s.n === n && (emptyToo || s.urlCount > 0));
}

/** The index's content version: every listed shard's version plus what else shapes the index. */
export function manifestVersion(shards: readonly ShardEntry[], indexFingerprint: string): string {
  const fp = new Fingerprint().addString(indexFingerprint);
  for (const s of shards) {
    if (s.urlCount === 0) continue;
    fp.addString(s.section).addNumber(s.n).addString(s.version).addNumber(s.lastChange);
  }
  return fp.digest();
}

/**
 * Where a shard's blocks were planned to start (blocks 1, 2, …): its block starts, or for an entry
 * planned before them its page starts after the first (what the planner then keeps).
 */
export function plannedBlockStarts(shard: Pick<ShardEntry, "blockStarts" | "pageStarts"> | undefined): readonly number[] {
  if (shard?.blockStarts) return shard.blockStarts;
  return shard?.pageStarts && shard.pageStarts.length > 1 ? shard.pageStarts.slice(1) : [];
}
