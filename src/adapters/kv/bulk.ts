/**
 * The KV layout of a fresh load, produced by the same functions as the writer object's projection
 * (layout.ts): blocks and overflow values for records on an EMPTY namespace (keys 1, 2, 3, … per
 * site in input order), and each site's load record. `kvBulkEntries` gives a `wrangler kv bulk put` file (docs/kv.md);
 * `kvLayoutValues` streams the same values block by block for loads too big to hold (the seeding
 * of `npm start`, the kv-scale bench). The site's writer object adopts such a load on its first
 * call (adopt.ts), so the admin API later updates the same data and every loc keeps its key.
 */
import { utf8Length } from "../../core/escape.ts";
import type { ValidRecord } from "../../core/validate.ts";
import { groupBy } from "./by-origin.ts";
import { type BlockMeta, type LoadRecord, blockName, blockOf, loadName, makeEntry, overflowName, placeEntry } from "./layout.ts";

/** One item of a `wrangler kv bulk put` file. */
export interface KvBulkEntry {
  key: string;
  value: string;
  metadata?: BlockMeta;
}

/** One value of the layout, with what it is (for byte counts). */
export interface KvLayoutValue extends KvBulkEntry {
  kind: "block" | "overflow" | "load";
}

export interface BulkOptions {
  /** Change stamp of the i-th record (ms); default: one `Date.now()` for all. */
  stampOf?: (index: number) => number;
}

/**
 * Every value of one site's layout for records in key order (keys 1, 2, 3, … as they come), block
 * by block: a block is complete once the keys pass its end, so memory holds one block per section.
 * The last value is the site's load record (what the load wrote, counted), which lets the site's
 * writer object tell a complete read of the load from one KV has not fully propagated yet.
 */
export function* kvLayoutValues(origin: string, records: Iterable<ValidRecord>, stampOf: (key: number) => number): Generator<KvLayoutValue> {
  const open = new Map<string, string[]>();
  const load: LoadRecord = { blocks: 0, entries: 0, values: 0 };
  let block = 0;
  const flush = function* (): Generator<KvLayoutValue> {
    for (const [section, entries] of open) {
      const value = `[${entries.join(",")}]`;
      load.blocks++;
      load.entries += entries.length;
      yield { kind: "block", key: blockName(origin, section, block), value, metadata: { n: entries.length, b: utf8Length(value) } };
    }
    open.clear();
  };
  let key = 0;
  for (const record of records) {
    key++;
    if (blockOf(key) !== block) {
      yield* flush();
      block = blockOf(key);
    }
    const placed = placeEntry(makeEntry(record, key, stampOf(key)));
    if (placed.overflow !== null) {
      load.values++;
      yield { kind: "overflow", key: overflowName(origin, record.section, key), value: placed.overflow };
    }
    let entries = open.get(record.section);
    if (!entries) open.set(record.section, (entries = []));
    entries.push(JSON.stringify(placed.inBlock));
  }
  yield* flush();
  yield { kind: "load", key: loadName(origin), value: JSON.stringify(load) };
}

/** The complete KV contents for validated records on an EMPTY namespace, as a `wrangler kv bulk put` file. */
export function kvBulkEntries(records: readonly ValidRecord[], options: BulkOptions = {}): KvBulkEntry[] {
  const now = Date.now();
  const stampOf = options.stampOf ?? (() => now);
  const out: KvBulkEntry[] = [];
  const indexed = records.map((record, index) => ({ record, index }));
  for (const [origin, group] of groupBy(indexed, (r) => r.record.origin)) {
    // A loc given twice counts once, at its last position (validation rejects duplicates anyway).
    const byLoc = new Map<string, { record: ValidRecord; index: number }>();
    for (const item of group) {
      byLoc.delete(item.record.loc);
      byLoc.set(item.record.loc, item);
    }
    const ordered = [...byLoc.values()];
    for (const { kind: _kind, ...entry } of kvLayoutValues(
      origin,
      ordered.map((g) => g.record),
      (key) => stampOf(ordered[key - 1]!.index),
    )) {
      out.push(entry);
    }
  }
  return out;
}
