/**
 * KvRecordWriter: batch writes of validated records into the KV layout of layout.ts, with the
 * contract of the port's RecordWriter (src/store/port.ts): upsert by `loc` (a loc's key is
 * assigned once, from the site's counter, and never changes), tombstones on delete, change stamps
 * moved only by a real change. Planning is in plan.ts, a site's batch state in site-batch.ts.
 *
 * KV has no transactions. Writes go in an order that makes any interrupted batch safe to retry:
 *   1. the counter (keys are reserved before anything uses them; a lost reservation is a gap),
 *   2. loc-index buckets (a new loc is findable before its record exists, so a retry reuses its
 *      key instead of creating a duplicate; a moved record's old section stays listed),
 *   3. overflow records, 4. blocks, 5. removals (old blocks / overflow of moved records).
 * A retry of the same batch repairs whatever step 2–5 left undone and bumps no stamp twice.
 * One writer at a time per site: KV is eventually consistent and has no compare-and-swap, and a
 * key takes one write per second. The Worker never runs this class itself: each site's batches go
 * through that site's Durable Object (site-writer.ts), which runs them one at a time and finishes
 * an interrupted one (docs/kv.md).
 *
 * Costs, in KV operations: reads ≈ touched buckets / 20 + touched blocks / 4 (+ overflow / 100),
 * writes = 1 counter + touched buckets (≤ 256) + touched blocks (+ overflow). A batch of 1,000
 * new records on a site: ~275 operations; a batch of 10 changed records: ~15.
 */
import type { ValidRecord } from "../../core/validate.ts";
import { PartialWriteError, StoreBudgetError } from "../../store/errors.ts";
import type { DeleteResult, RecordWriter, UpsertResult } from "../../store/port.ts";
import { type Counts, groupBy, noCounts, originOf, planDelete, planUpsert } from "./plan.ts";
import { PHASE_COUNTER, PHASE_REMOVALS, SiteBatch, type Write, kvReads, pool } from "./site-batch.ts";

/** `writes` counts KV writes (puts and deletes). */
export interface KvUpsertResult extends UpsertResult {
  /** KV operations used (a bulk get counts 1). The platform allows 1,000 per invocation. */
  operations: number;
}
export interface KvDeleteResult extends DeleteResult {
  operations: number;
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
class KvBudgetError extends StoreBudgetError {
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
    const { counts, rowsWritten, operations } = await this.#run(
      groupBy(records, (r) => r.origin),
      (batch, group) => planUpsert(batch, group, () => now),
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
      const batch = new SiteBatch(origin, reads, group.length);
      const siteCounts = await plan(batch, group);
      for (const key of Object.keys(counts) as (keyof Counts)[]) counts[key] += siteCounts[key];
      planned.push(batch.writes());
      records += group.length;
    }
    const needed = summary.operations + planned.reduce((n, w) => n + w.length, 0);
    if (needed > this.#maxOperations) throw new KvBudgetError(needed, this.#maxOperations, records);
    for (const writes of planned) {
      try {
        for (let phase = PHASE_COUNTER; phase <= PHASE_REMOVALS; phase++) {
          await pool(
            writes.filter((w) => w.phase === phase),
            this.#concurrency,
            (w) => {
              const put = w.make();
              return put === null ? this.#kv.delete(w.name) : this.#kv.put(w.name, put.value, put.metadata ? { metadata: put.metadata } : {});
            },
          );
        }
      } catch (err) {
        // Some keys may be written by now: say so (the port's `atomic: false`), never "nothing was written".
        throw new PartialWriteError(`a KV write failed partway (${(err as Error).message}); part of the batch may be written`, { cause: err });
      }
      summary.rowsWritten += writes.length;
      summary.operations += writes.length;
    }
    return { counts, ...summary };
  }
}
