/**
 * KvSiteWriter: the single writer of one site's KV records, a SQLite-backed Durable Object (one
 * per origin, `idFromName(origin)`). KV has no compare-and-swap, so two Workers that read-modify-
 * write the same block or loc-index bucket at once silently lose one side's records; the object
 * is the one place that decides who writes (docs/kv.md "Writers").
 *
 * - Batches run one at a time, in arrival order, at least SPACING_MS apart: every batch rewrites
 *   the site's counter (and usually the last block and some index buckets), and KV takes one
 *   write per second per key (faster writes fail with 429). At most MAX_QUEUED run or wait; a batch
 *   that finds the queue full, or waits longer than MAX_WAIT_MS, is answered "busy" with a retry
 *   delay (about the time the queue takes to drain) and nothing of it is written.
 * - A batch holds the site for at most LEASE_MS. One that runs longer is answered as interrupted
 *   and the site passes to the next batch, which replays it from the journal.
 * - Every batch is journaled before it starts (journal.ts). One left there (the object was reset,
 *   a KV write failed, the lease ran out) is replayed by the next batch before anything else, so
 *   the counter, loc-index buckets and blocks it left half-written are finished. The replaying
 *   batch is then answered "busy" (retry at once): each batch gets its own request and its own
 *   KV operation budget.
 * - Answers are plain values (RPC turns thrown errors into bare Errors).
 */
import { DurableObject } from "cloudflare:workers";
import { PartialWriteError, StoreBudgetError } from "../../store/errors.ts";
import { Journal } from "./journal.ts";
import type { SiteAnswer, SiteOp } from "./site-protocol.ts";
import { KvRecordWriter } from "./writer.ts";

/** Batches running or waiting per site; more are turned away at once. */
const MAX_QUEUED = 16;
/** Longest wait in the queue before a batch is turned away. */
const MAX_WAIT_MS = 30_000;
/** Least time between the starts of two batches that write (KV: 1 write per second per key). */
const SPACING_MS = 1_000;
/** Longest time a batch holds the site. */
const LEASE_MS = 60_000;
/** Replays of an interrupted batch before it is dropped (it was never acknowledged). */
const MAX_REPLAYS = 3;

const TIMED_OUT = Symbol("timed out");

/** `work`, or TIMED_OUT after `ms` (the work itself keeps running). */
async function within<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class KvSiteWriter extends DurableObject<Env> {
  readonly #journal: Journal;
  /** Settles when the last batch in the queue has finished with the site. */
  #tail: Promise<void> = Promise.resolve();
  #queued = 0;
  /** When the last batch that wrote started (ms). */
  #lastWriteAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#journal = new Journal(ctx.storage.sql);
  }

  /** Runs one batch of one site, after the batches before it. */
  async write(op: SiteOp): Promise<SiteAnswer> {
    if (this.#queued >= MAX_QUEUED) {
      return {
        ok: false,
        kind: "busy",
        message: `${MAX_QUEUED} batches for this site are already running or waiting; nothing was written`,
        retryAfter: 1,
      };
    }
    this.#queued++;
    const before = this.#tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#tail = before.then(() => mine);
    try {
      if ((await within(before, MAX_WAIT_MS)) === TIMED_OUT) {
        return { ok: false, kind: "busy", message: `waited ${MAX_WAIT_MS / 1000} s for the batches before it; nothing was written`, retryAfter: 2 };
      }
      const answer = await within(this.#exclusive(op), LEASE_MS);
      if (answer === TIMED_OUT) {
        return {
          ok: false,
          kind: "partial",
          message: `the batch held the site longer than ${LEASE_MS / 1000} s; part of it may be written, and the next batch for the site finishes it`,
        };
      }
      return answer;
    } finally {
      this.#queued--;
      release();
    }
  }

  /** With the site to itself: repair what an earlier batch left, else journal and run this one. */
  async #exclusive(op: SiteOp): Promise<SiteAnswer> {
    const interrupted = this.#journal.pending();
    if (interrupted.length > 0) {
      for (const entry of interrupted) {
        if (entry.tries >= MAX_REPLAYS) {
          console.error(`KV writer: dropping a batch that failed ${entry.tries} replays (it was never acknowledged)`);
          this.#journal.clear(entry.id);
          continue;
        }
        this.#journal.tried(entry.id);
        const answer = await this.#run(entry.op, entry.id);
        if (!answer.ok && answer.kind !== "budget" && answer.kind !== "failed") {
          return {
            ok: false,
            kind: "busy",
            message: `finishing an interrupted earlier batch failed (${answer.message}); nothing of this batch was written`,
            retryAfter: 2,
          };
        }
      }
      return {
        ok: false,
        kind: "busy",
        message: "an interrupted earlier batch was finished first; nothing of this batch was written yet: send it again",
        retryAfter: 0,
      };
    }
    return this.#run(op, this.#journal.save(op));
  }

  /** Runs a journaled batch (SPACING_MS after the last one that wrote); clears the journal unless a write failed partway. */
  async #run(op: SiteOp, id: string): Promise<SiteAnswer> {
    const wait = this.#lastWriteAt + SPACING_MS - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.#lastWriteAt = Date.now();
    const writer = new KvRecordWriter(this.env.URLS);
    try {
      const result = op.kind === "upsert" ? await writer.upsert(op.records, op.now) : await writer.delete(op.locs, op.now);
      this.#journal.clear(id);
      return { ok: true, result };
    } catch (err) {
      const message = (err as Error).message;
      if (err instanceof PartialWriteError) return { ok: false, kind: "partial", message: `${message}; the next batch for the site finishes it` };
      // Refused or failed before the first write: nothing to finish, and nothing must be replayed later.
      this.#journal.clear(id);
      if (err instanceof StoreBudgetError) return { ok: false, kind: "budget", message };
      console.error("KV writer: batch failed before writing", err);
      return { ok: false, kind: "failed", message: `${message}; nothing was written` };
    }
  }
}
