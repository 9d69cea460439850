/**
 * A run's snapshot writes: each document is staged while it renders, then committed; every key the
 * snapshot store writes is registered for the garbage collection first (tentative: deleted later
 * unless a published manifest takes it), so a run killed at any point leaves nothing unaccounted.
 */
import type { BlockStat } from "../core/block-plan.ts";
import type { BlockLayout } from "../core/gzip-blocks.ts";
import type { StagedDocument } from "../snapshots/stage-document.ts";
import { stageDocument } from "../snapshots/stage-document.ts";
import type { SnapshotDocument, SnapshotHandle, SnapshotStore, StoredBlocks } from "../snapshots/store.ts";
import type { RunCounters } from "./counters.ts";
import type { RegenStore } from "./store.ts";

export class SnapshotWriter {
  readonly #snapshots: SnapshotStore;
  readonly #beforeWrite: (key: string) => Promise<void>;
  readonly #now: number;
  readonly #counters: RunCounters;
  /** Keys written by this run (heads and what they own): confirmed once a published manifest takes them. */
  readonly writtenKeys: string[] = [];

  constructor(snapshots: SnapshotStore, regenState: RegenStore, origin: string, now: number, counters: RunCounters) {
    this.#snapshots = snapshots;
    this.#beforeWrite = (key) => regenState.tentative(origin, key, now);
    this.#now = now;
    this.#counters = counters;
  }

  /** Renders a document into the snapshot store's staging. */
  stage(xml: ReadableStream<Uint8Array>): Promise<StagedDocument> {
    return stageDocument(this.#snapshots, xml, this.#beforeWrite);
  }

  /** Stages a gzip file built in memory (a spliced shard: src/regen/splice.ts), its blocks laid out as `blocks`. */
  async stageGzip(file: Uint8Array, blocks: BlockLayout[]): Promise<StagedDocument> {
    const staged = await this.#snapshots.stage(new Blob([file]).stream(), this.#beforeWrite);
    return { staged, xmlBytes: blocks.reduce((n, b) => n + b.size, 0), blocks };
  }

  /**
   * Commits a staged document; returns its handle. `blocks`: the planner's figures of a shard's
   * blocks, stored with their layout as the snapshot's block table (what a splice needs) when they
   * are the blocks the document was deflated in.
   */
  async commit(document: SnapshotDocument, doc: StagedDocument, blocks?: readonly BlockStat[]): Promise<SnapshotHandle> {
    const meta = { version: document.version, xmlBytes: doc.xmlBytes, gzBytes: doc.staged.gzBytes, storedAt: this.#now };
    const layout = doc.blocks;
    const table: StoredBlocks | undefined =
      blocks && layout && layout.length === blocks.length
        ? { version: document.version, blocks: blocks.map((b, i) => ({ ...b, ...layout[i]! })) }
        : undefined;
    const handle = await this.#snapshots.commit(document, doc.staged, meta, this.#beforeWrite, table);
    this.writtenKeys.push(...this.#snapshots.ownedKeys(handle));
    this.#counters.bytesStored += doc.staged.gzBytes;
    this.#counters.xmlBytes += doc.xmlBytes;
    return handle;
  }

  /** Whether `handle` holds `document` (to keep a stored snapshot of an unchanged document). */
  holds(handle: SnapshotHandle, document: SnapshotDocument): boolean {
    return this.#snapshots.holds(handle, document);
  }

  intact(handle: SnapshotHandle): Promise<boolean> {
    return this.#snapshots.intact(handle);
  }
}
