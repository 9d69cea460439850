/** The KV contents of a fresh load, as a `wrangler kv bulk put` file (docs/kv.md). */
import type { ValidRecord } from "../../core/validate.ts";
import type { BlockMeta } from "./layout.ts";
import { groupBy, planUpsert } from "./plan.ts";
import { type Reads, SiteBatch } from "./site-batch.ts";

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
    const batch = new SiteBatch(origin, EMPTY_READS, group.length);
    await planUpsert(
      batch,
      group.map((g) => g.record),
      (i) => stampOf(group[i]!.index),
    );
    for (const w of batch.writes()) {
      const put = w.make();
      if (put) entries.push({ key: w.name, ...put });
    }
  }
  return entries;
}
