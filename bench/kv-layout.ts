/**
 * The KV layout of docs/kv.md (blocks of 1,000 entries, overflow values, loc-index buckets, the
 * counter) for the bench's demo records, built with the layout's own functions
 * (src/adapters/kv/layout.ts) and streamed block by block: what kvBulkEntries() produces for an
 * empty namespace, without holding every record (it would not fit at 10,000,000). The capacity
 * bench counts its bytes; the kv-scale bench writes it into local KV.
 */
import {
  type BlockMeta,
  blockNameOfKey,
  bucketOfHash,
  counterName,
  idOfHash,
  indexName,
  locHash,
  makeEntry,
  overflowName,
  placeEntry,
} from "../src/adapters/kv/layout.ts";
import { streamRecords } from "./lib.ts";

export interface KvValue {
  kind: "block" | "overflow" | "index" | "counter";
  name: string;
  value: string;
  metadata?: BlockMeta;
}

/** Every value of the layout for `count` demo records per section, keys 1, 2, 3, … in that order. */
export function* kvLayout(origin: string, sections: readonly { section: string; count: number }[], stampOf: (key: number) => number): Generator<KvValue> {
  // Loc index: per bucket, its `"id":[key,"section"]` members (an IndexBucket's JSON, given at the end).
  const buckets = new Map<string, string[]>();
  let key = 0;
  for (const { section, count } of sections) {
    let block: string[] = [];
    let blockName = "";
    const flush = function* (): Generator<KvValue> {
      if (block.length === 0) return;
      const value = `[${block.join(",")}]`;
      yield { kind: "block", name: blockName, value, metadata: { n: block.length, b: Buffer.byteLength(value) } };
      block = [];
    };
    for (const record of streamRecords(count, 0, section)) {
      key++;
      const name = blockNameOfKey(origin, section, key);
      if (name !== blockName) {
        yield* flush();
        blockName = name;
      }
      const placed = placeEntry(makeEntry(record, key, stampOf(key)));
      block.push(JSON.stringify(placed.inBlock));
      if (placed.overflow !== null) yield { kind: "overflow", name: overflowName(origin, section, key), value: placed.overflow };
      const hash = locHash(record.loc);
      const bucket = bucketOfHash(hash);
      let members = buckets.get(bucket);
      if (!members) buckets.set(bucket, (members = []));
      members.push(`${JSON.stringify(idOfHash(hash))}:[${key},${JSON.stringify(section)}]`);
    }
    yield* flush();
  }
  for (const [bucket, members] of buckets) yield { kind: "index", name: indexName(origin, bucket), value: `{${members.join(",")}}` };
  buckets.clear();
  yield { kind: "counter", name: counterName(origin), value: String(key + 1) };
}
