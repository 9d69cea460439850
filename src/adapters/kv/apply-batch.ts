/**
 * Applying one batch to a site's SQLite (site-db.ts), inside one synchronous transaction of the
 * writer object: the port's RecordWriter contract (upsert by loc, a loc's key assigned once and
 * never changed, tombstones on delete, change stamps moved only by a real change, a record whose
 * section is only the default keeps its section). What changed is marked pending for the KV
 * projection; the batch itself never touches KV. Synchronous on purpose: nothing else runs in the
 * object between the first read and the commit, so batches are one at a time by construction.
 */
import type { ValidRecord } from "../../core/validate.ts";
import { type BlockEntry, blockOf, contentText, makeEntry, placeEntry } from "./layout.ts";
import type { BatchCounts } from "./object-protocol.ts";
import type { SiteDb } from "./site-db.ts";

const noCounts = (): BatchCounts => ({ inserted: 0, updated: 0, unchanged: 0, deleted: 0, alreadyDeleted: 0, notFound: 0, writes: 0 });

const overflows = (entry: BlockEntry): boolean => placeEntry(entry).overflow !== null;

/** The blocks and overflow values a batch changed, each marked pending once when the batch ends. */
class Marks {
  readonly #items = new Map<string, ["b" | "v", string, number]>();
  add(kind: "b" | "v", section: string, n: number): void {
    this.#items.set(`${kind}\u0000${section}\u0000${n}`, [kind, section, n]);
  }
  flush(db: SiteDb, now: number): void {
    for (const [kind, section, n] of this.#items.values()) db.markPending(kind, section, n, now);
  }
}

/** Writes a record row and marks its block (and its overflow value, when `overflowChanged`) pending. */
function store(db: SiteDb, marks: Marks, entry: BlockEntry, section: string, overflowChanged: boolean): void {
  db.writeRecord(entry, section, "update");
  marks.add("b", section, blockOf(entry.k));
  if (overflowChanged) marks.add("v", section, entry.k);
}

/** Upserts validated records of one site at change stamp `stamp`. */
export function applyUpsert(db: SiteDb, input: readonly ValidRecord[], stamp: number, now: number): BatchCounts {
  const counts = noCounts();
  const marks = new Marks();
  // Last occurrence of a loc wins (validation rejects duplicates anyway); input order otherwise.
  const byLoc = new Map<string, ValidRecord>();
  for (const record of input) {
    byLoc.delete(record.loc);
    byLoc.set(record.loc, record);
  }
  // Records that name their section first, then those whose section is only the default: the
  // order D1's writer assigns new keys in (src/adapters/d1/writer.ts), so both sources key alike.
  const ordered = [...byLoc.values()];
  for (const record of [...ordered.filter((r) => r.sectionDefaulted !== true), ...ordered.filter((r) => r.sectionDefaulted === true)]) {
    const row = db.byLoc(record.loc);
    if (!row) {
      const entry = makeEntry(record, db.nextKey(), stamp);
      store(db, marks, entry, record.section, overflows(entry));
      counts.inserted++;
      counts.writes++;
      continue;
    }
    const old = JSON.parse(row.entry) as BlockEntry;
    const live = row.deleted === 0;
    // As on D1: re-sending a record whose section is only the default never moves it.
    const section = record.sectionDefaulted === true && live ? row.section : record.section;
    if (live && section === row.section && contentText(old) === contentText(record)) {
      counts.unchanged++;
      continue;
    }
    // A tombstone brought back counts as inserted (it was absent from the sitemaps).
    if (live) counts.updated++;
    else counts.inserted++;
    const hadOverflow = overflows(old);
    const entry = makeEntry(record, row.key, stamp);
    store(db, marks, entry, section, overflows(entry) || (hadOverflow && section === row.section));
    counts.writes++;
    if (section !== row.section) {
      // The section it left: its block loses the entry, its overflow value goes, and the move is
      // noted so regeneration re-renders the shard it left.
      marks.add("b", row.section, blockOf(row.key));
      if (hadOverflow) marks.add("v", row.section, row.key);
      db.sql.exec("INSERT INTO moves (section, key, stamp) VALUES (?, ?, ?)", row.section, row.key, stamp);
      counts.writes++;
    }
  }
  marks.flush(db, now);
  return counts;
}

/** Tombstones locs of one site at change stamp `stamp`; unknown and already deleted locs are no-ops. */
export function applyDelete(db: SiteDb, locs: readonly string[], stamp: number, now: number): BatchCounts {
  const counts = noCounts();
  const marks = new Marks();
  for (const loc of new Set(locs)) {
    const row = db.byLoc(loc);
    if (!row) counts.notFound++;
    else if (row.deleted === 1) counts.alreadyDeleted++;
    else {
      const entry: BlockEntry = { ...(JSON.parse(row.entry) as BlockEntry), u: stamp, d: 1 };
      // The overflow value of a tombstone is never read (readers resolve live entries only): left as it is.
      store(db, marks, entry, row.section, false);
      counts.deleted++;
      counts.writes++;
    }
  }
  marks.flush(db, now);
  return counts;
}
