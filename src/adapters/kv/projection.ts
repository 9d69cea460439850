/**
 * The KV projection of a site's SQLite (site-db.ts): what the request path reads, written from the
 * rows alone. A batch marks the blocks and overflow values it changed `pending` (each mark bumps
 * the item's `version`); a pass of the projector builds each pending item's value from the rows as
 * they are now and puts it.
 *
 * Fencing (docs/kv.md "Projection"): an item's next version is never put while a put of it is
 * still unsettled. Within the object, an item with a put in flight is skipped until that put has
 * resolved or rejected, however long it takes; no timer hands the item on. Across a reset of the
 * object (whose last puts may still be in the air) the put is recorded in SQLite before it leaves,
 * and another instance leaves that item alone for FOREIGN_PUT_FENCE_MS. Every put writes the
 * newest rows, so a put that settles late is followed by one of the current value if the item was
 * marked again meanwhile: the last write to land is always the newest.
 *
 * Order, as readers need it: an overflow value is put before the block whose stub points at it,
 * and a block is put before the overflow value it stopped using is deleted. A failed write keeps
 * its item pending, counts the failure and is retried after a backoff (the object's alarm).
 * KV takes one write per second per key: an item put less than a second ago waits.
 */
import { utf8Length } from "../../core/escape.ts";
import type { ProjectionState } from "../../store/port.ts";
import { BLOCK_SPAN, type BlockEntry, blockName, blockOf, overflowName, placeEntry } from "./layout.ts";
import type { SiteDb } from "./site-db.ts";

/** Writes one pass may start: well within the 1,000 KV operations of one invocation. */
const MAX_WRITES_PER_PASS = 400;
/** KV writes in flight at once. */
const CONCURRENCY = 8;
/** How long a pass waits for its writes before it ends (the writes keep their fence). */
const PASS_WAIT_MS = 10_000;
/** How long an item whose put was started by an earlier instance of the object is left alone. */
const FOREIGN_PUT_FENCE_MS = 120_000;
/** KV: one write per second per key. */
const KEY_WRITE_SPACING_MS = 1_000;
const MAX_BACKOFF_MS = 5 * 60_000;

type Item = {
  kind: "b" | "v";
  section: string;
  n: number;
  version: number;
  put_at: number | null;
  put_by: string | null;
  retry_at: number;
};

/** What a pending item's KV key should now hold: a value (and block metadata), or nothing. */
interface Value {
  name: string;
  value: string | null;
  metadata?: { n: number; b: number };
}

/** The projection's state, for the status endpoint (the port's ProjectionState, adoption aside). */
export type ProjectionStatus = Omit<ProjectionState, "adopting">;

const itemId = (item: { kind: string; section: string; n: number }): string => `${item.kind}\u0000${item.section}\u0000${item.n}`;

export class Projector {
  readonly #db: SiteDb;
  readonly #origin: string;
  readonly #kv: () => KVNamespace;
  readonly #schedule: (at: number) => void;
  /** This instance of the object (puts it started are fenced by `inFlight`, not by time). */
  readonly #instance = crypto.randomUUID();
  readonly #inFlight = new Map<string, Promise<void>>();
  /** When each item was last written, for KV's one write per second per key (only the last second kept). */
  readonly #lastWrite = new Map<string, number>();
  #passing: Promise<void> = Promise.resolve();
  #inPass = false;
  /**
   * The running pass left an item it may not write yet: written less than a second ago, or waiting
   * for another item's write (the order). The next pass is then at least a second away, not at once.
   */
  #spaced = false;

  /** `kv` is read at each write (tests swap the binding); `schedule` sets the object's alarm. */
  constructor(db: SiteDb, origin: string, kv: () => KVNamespace, schedule: (at: number) => void) {
    this.#db = db;
    this.#origin = origin;
    this.#kv = kv;
    this.#schedule = schedule;
  }

  /** Writes in flight right now (tests, status). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  status(): ProjectionStatus {
    const row = this.#db.sql
      .exec<{ pending: number; oldest: number | null; failing: number; next: number | null }>(
        `SELECT COUNT(*) AS pending, MIN(since) AS oldest, COUNT(CASE WHEN failures > 0 THEN 1 END) AS failing,
                MIN(CASE WHEN failures > 0 THEN retry_at END) AS next FROM pending`,
      )
      .one();
    const error = this.#db.sql.exec<{ error: string }>("SELECT error FROM pending WHERE error IS NOT NULL ORDER BY retry_at DESC LIMIT 1").toArray()[0];
    return { pending: row.pending, oldestSince: row.oldest, failing: row.failing, lastError: error?.error ?? null, nextRetryAt: row.next };
  }

  /**
   * One pass: overflow puts, then blocks, then overflow deletes, each item at most once, at most
   * MAX_WRITES_PER_PASS writes. Passes run one at a time. Returns how many writes it started.
   */
  pass(): Promise<number> {
    const run = this.#passing.then(() => this.#pass());
    this.#passing = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  async #pass(): Promise<number> {
    const now = Date.now();
    for (const [id, at] of this.#lastWrite) if (at <= now - KEY_WRITE_SPACING_MS) this.#lastWrite.delete(id);
    this.#spaced = false;
    const due = this.#db.sql
      .exec<Item>(
        "SELECT kind, section, n, version, put_at, put_by, retry_at FROM pending WHERE retry_at <= ? ORDER BY kind DESC, since LIMIT ?",
        now,
        4 * MAX_WRITES_PER_PASS,
      )
      .toArray()
      .filter((item) => this.#free(item, now));
    const deletes = new Set(due.filter((i) => i.kind === "v" && this.#value(i).value === null).map(itemId));
    let started = 0;
    const deadline = now + PASS_WAIT_MS;
    this.#inPass = true;
    try {
      for (const items of [
        due.filter((i) => i.kind === "v" && !deletes.has(itemId(i))),
        due.filter((i) => i.kind === "b"),
        due.filter((i) => deletes.has(itemId(i))),
      ]) {
        const ready = items.filter((item) => this.#waitsFor(item, deletes.has(itemId(item)))).slice(0, MAX_WRITES_PER_PASS - started);
        started += await this.#writeAll(ready, deadline);
      }
    } finally {
      this.#inPass = false;
    }
    this.reschedule();
    return started;
  }

  /**
   * Sets the alarm whenever anything is pending: for when the next item can be written, when
   * another instance's fence on an item ends, and, for a write of this instance still in the air,
   * when another instance would take the item over. That last one is the backstop of a write that
   * outlives its pass: its settling reschedules, but if this instance is gone before it settles
   * (reset, evicted), only the alarm wakes the object again, and the next instance writes the item
   * once its fence has passed. No pending row is ever left without an alarm.
   */
  reschedule(now = Date.now()): void {
    const row = this.#db.sql
      .exec<{ due: number | null; fenced: number | null; mine: number | null }>(
        `SELECT MIN(CASE WHEN put_at IS NULL THEN retry_at END) AS due,
                MIN(CASE WHEN put_at IS NOT NULL AND put_by != ? THEN put_at END) AS fenced,
                MIN(CASE WHEN put_at IS NOT NULL AND put_by = ? THEN put_at END) AS mine
         FROM pending`,
        this.#instance,
        this.#instance,
      )
      .one();
    let next = row.due === null ? Number.POSITIVE_INFINITY : Math.max(row.due, this.#spaced ? now + KEY_WRITE_SPACING_MS : now);
    if (row.fenced !== null) next = Math.min(next, Math.max(now, row.fenced + FOREIGN_PUT_FENCE_MS));
    if (row.mine !== null) next = Math.min(next, Math.max(now + PASS_WAIT_MS, row.mine + FOREIGN_PUT_FENCE_MS));
    if (Number.isFinite(next)) this.#schedule(Math.max(now, next));
  }

  /** Not fenced: no write of it in flight here, none of another instance recently, not written this second. */
  #free(item: Item, now: number): boolean {
    const id = itemId(item);
    if (this.#inFlight.has(id)) return false;
    if (item.put_at !== null && item.put_by !== this.#instance && item.put_at > now - FOREIGN_PUT_FENCE_MS) return false;
    if ((this.#lastWrite.get(id) ?? 0) <= now - KEY_WRITE_SPACING_MS) return true;
    this.#spaced = true;
    return false;
  }

  /**
   * The write order readers need, from the pending rows as they are now (a row stays until its
   * write has settled): a block waits until no overflow value in its range is owed (pending and to
   * be put), so a stub never reaches KV before its value has; an overflow delete waits for its
   * block, which must stop pointing at it first. Checked when the pass chooses the item and again,
   * synchronously with building its value, when its write starts: a batch may commit between the two.
   */
  #waitsFor(item: Item, isDelete: boolean): boolean {
    if (this.#orderAllows(item, isDelete)) return true;
    this.#spaced = true;
    return false;
  }

  #orderAllows(item: Item, isDelete: boolean): boolean {
    const sql = this.#db.sql;
    if (item.kind === "b") return this.#owedOverflowsAreDeletes(item.section, item.n * BLOCK_SPAN);
    if (!isDelete) return true;
    return sql.exec("SELECT 1 FROM pending WHERE kind = 'b' AND section = ? AND n = ? LIMIT 1", item.section, blockOf(item.n)).toArray().length === 0;
  }

  /** True when every overflow value still pending in a block's range is one to delete (the block may go first). */
  #owedOverflowsAreDeletes(section: string, lo: number): boolean {
    for (const item of this.#db.sql.exec<Item>(
      "SELECT kind, section, n, version, put_at, put_by, retry_at FROM pending WHERE kind = 'v' AND section = ? AND n BETWEEN ? AND ?",
      section,
      lo,
      lo + BLOCK_SPAN - 1,
    )) {
      if (this.#value(item).value !== null) return false;
    }
    return true;
  }

  /** The value an item's key should hold, from the rows as they are now. */
  #value(item: { kind: "b" | "v"; section: string; n: number }): Value {
    if (item.kind === "v") {
      const name = overflowName(this.#origin, item.section, item.n);
      const row = this.#db.sql.exec<{ section: string; entry: string }>("SELECT section, entry FROM records WHERE key = ?", item.n).toArray()[0];
      const overflow = row && row.section === item.section ? placeEntry(JSON.parse(row.entry) as BlockEntry).overflow : null;
      return { name, value: overflow };
    }
    const name = blockName(this.#origin, item.section, item.n);
    const lo = item.n * BLOCK_SPAN;
    const parts: string[] = [];
    for (const row of this.#db.sql.exec<{ entry: string }>(
      "SELECT entry FROM records WHERE section = ? AND key BETWEEN ? AND ? ORDER BY key",
      item.section,
      lo,
      lo + BLOCK_SPAN - 1,
    )) {
      parts.push(JSON.stringify(placeEntry(JSON.parse(row.entry) as BlockEntry).inBlock));
    }
    if (parts.length === 0) return { name, value: null };
    const value = `[${parts.join(",")}]`;
    return { name, value, metadata: { n: parts.length, b: utf8Length(value) } };
  }

  /**
   * Writes items, CONCURRENCY at a time, waiting for them until `deadline` (they stay fenced after
   * it). Returns how many writes it started.
   */
  async #writeAll(items: readonly Item[], deadline: number): Promise<number> {
    let next = 0;
    let started = 0;
    const lane = async (): Promise<void> => {
      while (next < items.length && Date.now() < deadline) {
        const item = items[next++]!;
        if (this.#inFlight.has(itemId(item))) continue;
        // Built now, not when the pass chose the item: rows may have changed while earlier writes
        // were awaited. The order is checked again with it, in the same synchronous step.
        const value = this.#value(item);
        if (!this.#waitsFor(item, value.value === null)) continue;
        started++;
        const write = this.#start(item, value);
        const left = deadline - Date.now();
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([write, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, left))))]);
        clearTimeout(timer);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, lane));
    return started;
  }

  /** Starts one write; it settles the item's row whenever it settles. */
  #start(item: Item, value: Value): Promise<void> {
    const id = itemId(item);
    const startedAt = Date.now();
    const key = [item.kind, item.section, item.n] as const;
    this.#db.sql.exec(
      "UPDATE pending SET put_version = ?, put_at = ?, put_by = ? WHERE kind = ? AND section = ? AND n = ?",
      item.version,
      startedAt,
      this.#instance,
      ...key,
    );
    const kv = this.#kv();
    const request = value.value === null ? kv.delete(value.name) : kv.put(value.name, value.value, value.metadata ? { metadata: value.metadata } : {});
    const settled = request.then(
      () => {
        // Done unless the item was marked again while the write was in the air: then it stays, for its newer rows.
        const removed = this.#db.sql.exec(
          "DELETE FROM pending WHERE kind = ? AND section = ? AND n = ? AND version = ?",
          ...key,
          item.version,
        ).rowsWritten;
        if (removed === 0) {
          this.#db.sql.exec(
            "UPDATE pending SET put_version = NULL, put_at = NULL, put_by = NULL, failures = 0, error = NULL, retry_at = 0 WHERE kind = ? AND section = ? AND n = ?",
            ...key,
          );
        }
      },
      (err: unknown) => {
        const failures =
          this.#db.sql.exec<{ failures: number }>("SELECT failures FROM pending WHERE kind = ? AND section = ? AND n = ?", ...key).toArray()[0]
            ?.failures ?? 0;
        const retryAt = Date.now() + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** failures);
        const message = err instanceof Error ? err.message : String(err);
        this.#db.sql.exec(
          "UPDATE pending SET put_version = NULL, put_at = NULL, put_by = NULL, failures = failures + 1, error = ?, retry_at = ? WHERE kind = ? AND section = ? AND n = ?",
          `${item.kind === "b" ? "block" : "overflow value"} write failed: ${message.slice(0, 200)}`,
          retryAt,
          ...key,
        );
        console.error(`KV projection: writing ${value.name} failed (${message}); retried from ${new Date(retryAt).toISOString()}`);
      },
    );
    const tracked = settled.finally(() => {
      this.#inFlight.delete(id);
      this.#lastWrite.set(id, startedAt);
      // A write that outlived its pass: nothing else will set the alarm for what is left.
      if (!this.#inPass) this.reschedule();
    });
    this.#inFlight.set(id, tracked);
    return tracked;
  }
}
