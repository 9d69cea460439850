/** One record read back by loc through the loc index (a bucket read, a block read, overflow if any). */
import type { FoundRecord } from "../../store/port.ts";
import { storedRecord } from "./layout.ts";
import { originOf } from "./plan.ts";
import { SiteBatch, kvReads, locate } from "./site-batch.ts";

/** The stored record of a normalised loc, tombstone or not, found through the loc index; null when never stored. */
export async function findRecord(kv: KVNamespace, loc: string): Promise<FoundRecord | null> {
  const origin = originOf(loc);
  if (origin === null) return null;
  const batch = new SiteBatch(origin, kvReads(kv, { operations: 0 }), 1);
  const [l] = await locate(batch, [loc]);
  const match = l!.matches[0];
  if (!match) return null;
  await batch.loadOverflow([match]);
  const entry = batch.fullEntry(match.s, batch.entry(match.s, match.k)!);
  return { ...storedRecord(entry, match.s), origin, deleted: entry.d === 1 };
}
