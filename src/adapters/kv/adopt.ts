/**
 * Adopting records that are in KV but not in the writer object's SQLite: a namespace filled by
 * `wrangler kv bulk put` (bulk.ts), by `npm start`'s seeding, or by an earlier version of this
 * Worker, whose writers kept their state in KV. Once per site, before the object's first batch or
 * read: the site's blocks are listed and read (overflow values resolved), their entries become
 * record rows, and the next key is set past every key seen (and past an old `c#` counter). The
 * only time the object reads KV; resumable: progress is kept in SQLite after every block, by the
 * name of the last block adopted (never by a position in a list() page, whose contents may differ
 * from one call to the next), so an adoption that runs out of its invocation's budget goes on
 * where it stopped.
 *
 * KV's list() and get() are eventually consistent: right after a bulk put they may show part of
 * it. So a read of KV is a *pass*, and the site is marked adopted only after a pass that is known
 * complete (docs/kv.md "Adoption"):
 *   - a load with a load record (bulk.ts writes one per site): the pass read exactly the blocks,
 *     entries and overflow values the record counts;
 *   - KV holds nothing for the site (no block, no load record): a new site, adopted at once;
 *   - blocks without a load record (an earlier version's namespace, a hand-made load): a second
 *     pass, started ADOPT_SETTLE_MS after the first (past KV's propagation window), reads it all
 *     again and adopts what it finds; the first pass alone is never trusted.
 * Otherwise the object tries another pass ADOPT_SETTLE_MS later; writes are told to retry meanwhile.
 *
 * An object of the earlier version may also hold a journal of a batch it never finished (its table
 * `journal`): replayed once adoption is done, then dropped.
 */
import type { ValidRecord } from "../../core/validate.ts";
import { applyDelete, applyUpsert } from "./apply-batch.ts";
import { chunked, fetchAhead, readOverflow } from "./blocks.ts";
import {
  type BlockEntry,
  type BlockMeta,
  type LoadRecord,
  blockOf,
  counterName,
  loadName,
  namedBlock,
  parseBlock,
  parseBlockName,
  parseLoadRecord,
  sitePrefix,
} from "./layout.ts";
import type { SiteDb } from "./site-db.ts";

/** Blocks per bulk get when their sizes are unknown, and bytes per get (KV answers ≤ 25 MB; a block is ≤ ~4 MB). */
const BLOCKS_PER_GET = 4;
const BYTES_PER_GET = 8 * 1024 * 1024;
/**
 * Blocks adopted per step (~100,000 records): a step stays a few seconds of CPU, well within a
 * Durable Object request's 30 s, and ~30 KV operations.
 */
const BLOCKS_PER_STEP = 100;
/** KV: "changes may take up to 60 seconds or more to be visible in other global network locations". */
const ADOPT_SETTLE_MS = 60_000;

/** Where an adoption stands: done, or to be resumed at `resumeAt` (ms; now or later). */
export type AdoptProgress = { done: true } | { done: false; resumeAt: number };

/** What the pass under way has read so far. */
interface PassCounts {
  blocks: number;
  entries: number;
  values: number;
  /** Stubs whose overflow value was missing or of another version (KV not settled yet). */
  unsure: number;
}

const NO_COUNTS: PassCounts = { blocks: 0, entries: 0, values: 0, unsure: 0 };

/** One adoption step: up to BLOCKS_PER_STEP blocks of the pass under way (one KV list() page holds 1,000). */
export async function adoptStep(db: SiteDb, kv: KVNamespace, origin: string, now: number): Promise<AdoptProgress> {
  if (db.get("adopted") === 1) return { done: true };
  const resumeAt = db.number("adopt_resume_at", 0);
  if (resumeAt > now) return { done: false, resumeAt };
  // An object of the version that kept a position in a list() page restarts its pass.
  if (db.get("adopt_blocks") !== null) {
    db.set("adopt_blocks", null);
    db.set("adopt_pass_at", null);
  }
  if (db.get("adopt_pass_at") === null) startPass(db, now);
  const cursor = db.get("adopt_cursor");
  const after = db.get("adopt_after");
  const page = await kv.list<Partial<BlockMeta>>({ prefix: sitePrefix(origin), ...(typeof cursor === "string" ? { cursor } : {}) });
  const left = page.keys.filter((k) => typeof after !== "string" || k.name > after);
  const names = left.slice(0, BLOCKS_PER_STEP).map((k) => namedBlock(k.name, k.metadata));
  const counts = passCounts(db);
  const firstPass = db.number("adopt_pass", 0) === 0;
  for await (const blocks of fetchAhead(kv, chunked(one(names), BLOCKS_PER_GET, BYTES_PER_GET))) {
    for (const { name, text } of blocks) {
      // Listed but not read: not yet visible here, or deleted since; the pass's counts tell.
      if (text !== null) await adoptBlock(db, kv, origin, name, text, counts, firstPass, now);
      // With the block's rows, before the next await: the object commits both together, so a
      // step cut short resumes after the last block adopted.
      db.set("adopt_after", name);
      db.set("adopt_counts", JSON.stringify(counts));
    }
  }
  if (left.length > names.length) return { done: false, resumeAt: now };
  if (!page.list_complete) {
    db.set("adopt_cursor", page.cursor);
    return { done: false, resumeAt: now };
  }
  return endPass(db, kv, origin, counts, now);
}

async function* one<T>(value: T): AsyncGenerator<T> {
  yield value;
}

function startPass(db: SiteDb, now: number): void {
  db.set("adopt_pass_at", now);
  db.set("adopt_cursor", null);
  db.set("adopt_after", null);
  db.set("adopt_counts", JSON.stringify(NO_COUNTS));
}

function passCounts(db: SiteDb): PassCounts {
  const text = db.get("adopt_counts");
  return typeof text === "string" ? { ...NO_COUNTS, ...(JSON.parse(text) as Partial<PassCounts>) } : { ...NO_COUNTS };
}

/** One block's entries as record rows, overflow values resolved (in byte-capped bulk gets). */
async function adoptBlock(
  db: SiteDb,
  kv: KVNamespace,
  origin: string,
  name: string,
  text: string,
  counts: PassCounts,
  firstPass: boolean,
  now: number,
): Promise<void> {
  const { section, block } = parseBlockName(name, origin);
  const entries = parseBlock(text, name, block);
  // A tombstone's overflow value is never read, and may be gone: its stub is kept.
  const full = await readOverflow(
    kv,
    origin,
    section,
    entries.filter((e) => e.v === 1 && e.d !== 1),
  );
  counts.blocks++;
  counts.entries += entries.length;
  for (const entry of entries) {
    const read = entry.v === 1 && entry.d !== 1 ? full.get(entry.k)! : { entry };
    if ("problem" in read) {
      // Past KV's propagation window, a stub without its value is the layout's error, not KV's delay.
      if (!firstPass) throw new Error(read.problem);
      counts.unsure++;
      continue;
    }
    if (entry.v === 1 && entry.d !== 1) counts.values++;
    adoptEntry(db, read.entry, section, now);
  }
}

/** The end of a pass: adopted when the pass is known complete, else another pass after KV's window. */
async function endPass(db: SiteDb, kv: KVNamespace, origin: string, counts: PassCounts, now: number): Promise<AdoptProgress> {
  const pass = db.number("adopt_pass", 0);
  // One bulk get: the load record, and an earlier version's counter (finish() needs it).
  const values = await kv.get([loadName(origin), counterName(origin)], "text");
  const loadText = values.get(loadName(origin));
  const load: LoadRecord | null = typeof loadText === "string" ? parseLoadRecord(loadText, loadName(origin)) : null;
  const complete =
    counts.unsure === 0 &&
    (load !== null
      ? counts.blocks === load.blocks && counts.entries === load.entries && counts.values === load.values
      : pass === 0
        ? counts.blocks === 0 // nothing at all: a new site
        : true); // a second pass, ADOPT_SETTLE_MS after the first: past KV's window
  if (complete) {
    finish(db, values.get(counterName(origin)) ?? null);
    return { done: true };
  }
  const resumeAt = Math.max(now, db.number("adopt_pass_at", now) + ADOPT_SETTLE_MS);
  db.set("adopt_pass", pass + 1);
  db.set("adopt_resume_at", resumeAt);
  db.set("adopt_pass_at", null);
  return { done: false, resumeAt };
}

/**
 * One entry as a record row; returns nothing. A later pass finds the rows of an earlier one: an
 * entry that reads differently now (the earlier pass saw an older value) replaces its row. The same
 * key in two sections (an earlier writer stopped mid-move) keeps the newer one, and the other
 * section's block is projected again without it.
 */
function adoptEntry(db: SiteDb, entry: BlockEntry, section: string, now: number): void {
  const { v: _stub, x: _kinds, ...stored } = entry;
  const existing = db.sql
    .exec<{ section: string; stamp: number; entry: string }>("SELECT section, stamp, entry FROM records WHERE key = ?", entry.k)
    .toArray()[0];
  if (!existing) {
    db.writeRecord(entry, section, "keep", stored); // a loc already under another key: the first kept
    return;
  }
  if (existing.section === section) {
    if (existing.entry !== JSON.stringify(stored)) db.writeRecord(entry, section, "update", stored);
    return;
  }
  if (existing.stamp >= entry.u) {
    db.markPending("b", section, blockOf(entry.k), now);
    return;
  }
  db.markPending("b", existing.section, blockOf(entry.k), now);
  db.sql.exec("DELETE FROM records WHERE key = ?", entry.k);
  db.writeRecord(entry, section, "keep", stored);
}

/** Keys and stamps continue past what was adopted; an earlier version's unfinished batch is replayed. */
function finish(db: SiteDb, counterText: string | null): void {
  const max = db.sql.exec<{ key: number | null; stamp: number | null }>("SELECT MAX(key) AS key, MAX(stamp) AS stamp FROM records").one();
  const counter = Number(counterText ?? 0);
  db.set("next_key", Math.max(db.number("next_key", 1), (max.key ?? 0) + 1, Number.isSafeInteger(counter) ? counter : 0));
  db.set("last_stamp", Math.max(db.number("last_stamp", 0), max.stamp ?? 0));
  db.set("adopted", 1);
  for (const name of ["adopt_cursor", "adopt_after", "adopt_counts", "adopt_pass", "adopt_pass_at", "adopt_resume_at", "adopt_blocks"] as const)
    db.set(name, null);
  replayOldJournal(db);
}

type OldOp = { kind: "upsert"; records: ValidRecord[]; now: number } | { kind: "delete"; locs: string[]; now: number };

function replayOldJournal(db: SiteDb): void {
  const table = db.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'journal'").toArray();
  if (table.length === 0) return;
  const byId = new Map<string, string[]>();
  for (const row of db.sql.exec<{ id: string; text: string }>("SELECT id, text FROM journal ORDER BY rowid")) {
    byId.set(row.id, [...(byId.get(row.id) ?? []), row.text]);
  }
  for (const parts of byId.values()) {
    const op = JSON.parse(parts.join("")) as OldOp;
    const stamp = db.commitStamp(op.now);
    if (op.kind === "upsert") applyUpsert(db, op.records, stamp, Date.now());
    else applyDelete(db, op.locs, stamp, Date.now());
  }
  db.sql.exec("DROP TABLE journal");
}
