/**
 * What a pass has read but not yet written: records for its sync, locs it keeps, and how each
 * listed sitemap it finished was read. An index of many small sitemaps (50,000 of one URL each) would
 * otherwise cost a sync batch and a state write per sitemap — ~9 of the 1,000 calls an invocation
 * may make, so ~65 sitemaps a step and more steps than a chain may take; written together, 500
 * records or sitemaps cost about as much as one.
 *
 * The saved position moves only with a flush, in the same write as the sitemaps read up to it: an
 * invocation that dies before the next flush leaves the position at the last one, and the next run
 * reads those sitemaps again (their records sent again, the same; the pass's counts saved with the
 * position, so not counted twice).
 */
import type { ValidRecord } from "../core/validate.ts";
import type { MirrorDeps } from "./deps.ts";
import type { ChildRead, MirrorState } from "./store.ts";

/** Records and kept locs per sync batch; sitemaps read per state write. */
const WRITE_BATCH = 500;

export class PassWrites {
  records = new Map<string, ValidRecord>();
  kept = new Set<string>();
  reads: ChildRead[] = [];

  /** Whether enough is waiting for a write. */
  get full(): boolean {
    return this.records.size + this.kept.size >= WRITE_BATCH || this.reads.length >= WRITE_BATCH;
  }

  /** Sends what waits to the pass's sync, then saves `state` (its position) with the sitemaps read. */
  async flush(deps: MirrorDeps, state: MirrorState): Promise<void> {
    if (this.records.size > 0) await deps.sync.upsert(state.syncId!, [...this.records.values()]);
    if (this.kept.size > 0) await deps.sync.keep(state.syncId!, [...this.kept]);
    const reads = this.reads;
    this.records = new Map();
    this.kept = new Set();
    this.reads = [];
    await deps.state.save(state, reads);
  }
}
