/**
 * The bench's demo records as KV values, streamed block by block: src/adapters/kv/bulk.ts's
 * producer (the one the writer object's projection writes the same bytes as), fed with
 * bench/lib.ts's demo records, keys 1, 2, 3, … section after section. The capacity bench counts its
 * bytes; the kv-scale bench writes it into local KV.
 */
import { type KvLayoutValue, kvLayoutValues } from "../src/adapters/kv/bulk.ts";
import { streamRecords } from "./lib.ts";

/** Every value of the layout for `count` demo records per section. */
export function kvLayout(
  origin: string,
  sections: readonly { section: string; count: number }[],
  stampOf: (key: number) => number,
): Generator<KvLayoutValue> {
  const records = function* () {
    for (const { section, count } of sections) yield* streamRecords(count, 0, section);
  };
  return kvLayoutValues(origin, records(), stampOf);
}
