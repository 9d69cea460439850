/** Planning a KV batch: what an upsert or a delete changes in a site's batch, and the per-record counts. */
import type { ValidRecord } from "../../core/validate.ts";
import { KvLayoutError, blockNameOfKey, contentText, counterName, makeEntry } from "./layout.ts";
import { type SiteBatch, locate } from "./site-batch.ts";

export interface Counts {
  inserted: number;
  updated: number;
  unchanged: number;
  deleted: number;
  alreadyDeleted: number;
  notFound: number;
}

export const noCounts = (): Counts => ({ inserted: 0, updated: 0, unchanged: 0, deleted: 0, alreadyDeleted: 0, notFound: 0 });

export async function planUpsert(batch: SiteBatch, input: readonly ValidRecord[], stampOf: (i: number) => number): Promise<Counts> {
  const counts = noCounts();
  // Last occurrence of a loc wins (validation rejects duplicates anyway).
  const byLoc = new Map<string, number>();
  for (const [i, r] of input.entries()) byLoc.set(r.loc, i);
  const indexes = [...byLoc.values()].sort((a, b) => a - b);
  const records = indexes.map((i) => input[i]!);
  const located = await locate(
    batch,
    records.map((r) => r.loc),
  );
  await keepSections(batch, records, located);

  // Keys: existing ones from the index; new locs reuse a vacant key (interrupted earlier write) or
  // get the next one from the counter, in input order.
  const keys: number[] = [];
  for (let i = 0; i < records.length; i++) {
    const l = located[i]!;
    const primary = l.matches.find((m) => m.s === records[i]!.section) ?? l.matches[0];
    keys.push(primary?.k ?? l.vacant[0]?.k ?? (await batch.allocate()));
  }
  await batch.loadBlocks(records.map((r, i) => blockNameOfKey(batch.origin, r.section, keys[i]!)));
  await batch.loadOverflow(located.flatMap((l) => l.matches.filter((m) => batch.entry(m.s, m.k)?.v === 1)));

  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const l = located[i]!;
    const key = keys[i]!;
    const now = stampOf(indexes[i]!);
    const primary = l.matches.find((m) => m.s === record.section) ?? l.matches[0];
    const removals = l.matches.filter((m) => m !== primary && m.s !== record.section);
    if (primary) {
      const old = batch.fullEntry(primary.s, batch.entry(primary.s, key)!);
      const same = primary.s === record.section && old.d !== 1 && contentText(old) === contentText(record);
      // As with D1: a tombstone brought back counts as inserted (it was absent from the sitemaps).
      if (old.d === 1) counts.inserted++;
      else if (same) counts.unchanged++;
      else counts.updated++;
      if (!same) {
        batch.put(record.section, makeEntry(record, key, now));
        if (primary.s !== record.section) removals.push(primary);
      }
    } else {
      const clash = batch.entry(record.section, key);
      if (clash && clash.loc !== record.loc) {
        throw new KvLayoutError(counterName(batch.origin), `key ${key} is already used by another loc: the counter is behind the blocks`);
      }
      batch.put(record.section, makeEntry(record, key, now));
      counts.inserted++;
    }
    for (const r of removals) batch.remove(r.s, r.k);
    // The old sections stay in the index until their removal is written (see the header).
    batch.setIndex(l.hash, [{ k: key, s: record.section }, ...removals, ...l.collisions]);
  }
  return counts;
}

/**
 * A record whose section is only the default (nothing named one: ValidRecord.sectionDefaulted)
 * keeps the section of its live entry, so re-sending it never moves it (as on D1).
 */
async function keepSections(batch: SiteBatch, records: ValidRecord[], located: Awaited<ReturnType<typeof locate>>): Promise<void> {
  const matches = records.flatMap((r, i) => (r.sectionDefaulted === true ? located[i]!.matches : []));
  if (matches.length === 0) return;
  await batch.loadBlocks(matches.map((m) => blockNameOfKey(batch.origin, m.s, m.k)));
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record.sectionDefaulted !== true) continue;
    const live = located[i]!.matches.find((m) => {
      const entry = batch.entry(m.s, m.k);
      return entry !== undefined && entry.d !== 1;
    });
    if (live && live.s !== record.section) records[i] = { ...record, section: live.s };
  }
}

export async function planDelete(batch: SiteBatch, locs: readonly string[], now: number): Promise<Counts> {
  const counts = noCounts();
  const located = await locate(batch, locs);
  for (const l of located) {
    let deleted = false;
    for (const m of l.matches) {
      if (batch.entry(m.s, m.k)!.d === 1) continue;
      batch.tombstone(m.s, m.k, now);
      deleted = true;
    }
    if (deleted) counts.deleted++;
    else if (l.matches.length > 0) counts.alreadyDeleted++;
    else counts.notFound++;
  }
  return counts;
}

export function originOf(loc: string): string | null {
  try {
    return new URL(loc).origin;
  } catch {
    return null;
  }
}

export function groupBy<T>(items: readonly T[], originOfItem: (item: T) => string | null): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const origin = originOfItem(item);
    if (origin === null) continue;
    const list = groups.get(origin) ?? [];
    list.push(item);
    groups.set(origin, list);
  }
  return groups;
}
