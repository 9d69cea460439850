/**
 * Adopting records that are in KV but not in the writer object's SQLite: a namespace filled by
 * `wrangler kv bulk put` (bulk.ts), by `npm start`'s seeding, or by an earlier version of this
 * Worker, whose writers kept their state in KV. Once per site, before the object's first batch or
 * read: the site's blocks are listed and read (overflow values resolved), their entries become
 * record rows, and the next key is set past every key seen (and past an old `c#` counter). The
 * only time the object reads KV; resumable: progress is kept in SQLite after every block, so an
 * adoption that runs out of its invocation's budget goes on where it stopped.
 *
 * An object of the earlier version may also hold a journal of a batch it never finished (its table
 * `journal`): replayed once adoption is done, then dropped.
 */
import type { ValidRecord } from "../../core/validate.ts";
import { applyDelete, applyUpsert } from "./apply-batch.ts";
import { chunked, fetchAhead } from "./blocks.ts";
import {
  type BlockEntry,
  type BlockMeta,
  blockOf,
  counterName,
  namedBlock,
  overflowName,
  parseBlock,
  parseBlockName,
  parseOverflow,
  sitePrefix,
} from "./layout.ts";
import type { SiteDb } from "./site-db.ts";

/** Blocks per bulk get when their sizes are unknown, and bytes per get (KV answers ≤ 25 MB). */
const BLOCKS_PER_GET = 4;
const BYTES_PER_GET = 8 * 1024 * 1024;
/** KV bulk get: ≤ 100 keys. */
const OVERFLOW_PER_GET = 100;
/**
 * Blocks adopted per step (~100,000 records): a step stays a few seconds of CPU, well within a
 * Durable Object request's 30 s, and ~30 KV operations.
 */
const BLOCKS_PER_STEP = 100;

/** One adoption step: the next BLOCKS_PER_STEP blocks of the site (one KV list() page holds 1,000). Returns whether adoption is done. */
export async function adoptStep(db: SiteDb, kv: KVNamespace, origin: string, now: number): Promise<boolean> {
  if (db.get("adopted") === 1) return true;
  const cursor = db.get("adopt_cursor");
  const done = db.number("adopt_blocks", 0);
  const page = await kv.list<Partial<BlockMeta>>({ prefix: sitePrefix(origin), ...(typeof cursor === "string" ? { cursor } : {}) });
  const names = page.keys.slice(done, done + BLOCKS_PER_STEP).map((k) => namedBlock(k.name, k.metadata));
  let adopted = done;
  for await (const blocks of fetchAhead(kv, chunked(one(names), BLOCKS_PER_GET, BYTES_PER_GET))) {
    for (const { name, text } of blocks) {
      if (text !== null) {
        const { section, block } = parseBlockName(name, origin);
        const entries = await withOverflowEntries(kv, origin, section, parseBlock(text, name, block));
        for (const entry of entries) adoptEntry(db, entry, section, now);
      }
      // With the block's rows, before the next await: the object commits both together, so a
      // step cut short resumes at the first block not adopted.
      db.set("adopt_blocks", ++adopted);
    }
  }
  if (adopted < page.keys.length) return false;
  if (!page.list_complete) {
    db.set("adopt_cursor", page.cursor);
    db.set("adopt_blocks", 0);
    return false;
  }
  await finish(db, kv, origin);
  return true;
}

async function* one<T>(value: T): AsyncGenerator<T> {
  yield value;
}

/** Entries with their overflow stubs replaced by the full entries (change stamp and tombstone from the stub). */
async function withOverflowEntries(kv: KVNamespace, origin: string, section: string, entries: BlockEntry[]): Promise<BlockEntry[]> {
  const stubs = entries.filter((e) => e.v === 1);
  const full = new Map<number, BlockEntry>();
  for (let i = 0; i < stubs.length; i += OVERFLOW_PER_GET) {
    const group = stubs.slice(i, i + OVERFLOW_PER_GET);
    const names = group.map((e) => overflowName(origin, section, e.k));
    const values = await kv.get(names, "text");
    group.forEach((stub, j) => {
      const text = values.get(names[j]!);
      // A tombstone's overflow value is never read, and may be gone: keep its stub.
      if (text === null || text === undefined) {
        if (stub.d === 1) return;
        throw new Error(`KV overflow record "${names[j]}" is missing (its block has a stub for key ${stub.k})`);
      }
      full.set(stub.k, { ...parseOverflow(text, names[j]!, stub.k), u: stub.u, ...(stub.d ? { d: 1 as const } : {}) });
    });
  }
  return entries.map((e) => full.get(e.k) ?? e);
}

/**
 * One entry as a record row. The same key in two sections (an earlier writer stopped mid-move)
 * keeps the newer one, and the other section's block is projected again without it.
 */
function adoptEntry(db: SiteDb, entry: BlockEntry, section: string, now: number): void {
  const { v: _stub, x: _kinds, ...stored } = entry;
  const insert = () => db.writeRecord(entry, section, "keep", stored);
  if (insert() > 0) return;
  // Not inserted: the key (or the loc) is there already.
  const existing = db.sql.exec<{ section: string; stamp: number }>("SELECT section, stamp FROM records WHERE key = ?", entry.k).toArray()[0];
  if (!existing || existing.section === section) return; // the same block adopted again after a cut-short step; or a loc under two keys: the first kept
  if (existing.stamp >= entry.u) {
    db.markPending("b", section, blockOf(entry.k), now);
    return;
  }
  db.markPending("b", existing.section, blockOf(entry.k), now);
  db.sql.exec("DELETE FROM records WHERE key = ?", entry.k);
  insert();
}

/** Keys and stamps continue past what was adopted; an earlier version's unfinished batch is replayed. */
async function finish(db: SiteDb, kv: KVNamespace, origin: string): Promise<void> {
  const max = db.sql.exec<{ key: number | null; stamp: number | null }>("SELECT MAX(key) AS key, MAX(stamp) AS stamp FROM records").one();
  const counter = Number((await kv.get(counterName(origin), "text")) ?? 0);
  db.set("next_key", Math.max(db.number("next_key", 1), (max.key ?? 0) + 1, Number.isSafeInteger(counter) ? counter : 0));
  db.set("last_stamp", Math.max(db.number("last_stamp", 0), max.stamp ?? 0));
  db.set("adopted", 1);
  db.set("adopt_cursor", null);
  db.set("adopt_blocks", null);
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
