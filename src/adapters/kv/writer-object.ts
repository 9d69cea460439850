/**
 * KvSiteWriter: the writer object of one site (a SQLite-backed Durable Object, `idFromName(origin)`,
 * bound as KV_WRITERS). Its SQLite is the source of truth for the site's writes (site-db.ts): a
 * batch is applied in one synchronous transaction (apply-batch.ts), so batches are one at a time
 * by construction and a `200` means committed, strongly consistent. KV is its projection
 * (projection.ts): what changed is written to KV after the commit, by the object's alarm, fenced
 * and retried with backoff. The object never reads KV to decide anything, except once, to adopt a
 * site whose records are in KV from before (adopt.ts).
 *
 * It also answers the reads that must be exact: the change feed, the regeneration's scan, news and
 * recent-change indexes, a record by loc (site-queries.ts). Answers are plain values (RPC turns
 * thrown errors into bare Errors; reads throw plain errors the caller logs).
 */
import { DurableObject } from "cloudflare:workers";
import type { StoredRecord } from "../../core/types.ts";
import type { ChangeCursor, ChangePage, ChangeStamp, FoundRecord, NewsStats, SampledRecord, ScanPosition } from "../../store/port.ts";
import { runAdminCall } from "./admin-tables.ts";
import { type AdoptProgress, adoptStep } from "./adopt.ts";
import { applyDelete, applyUpsert } from "./apply-batch.ts";
import type { AdminAnswer, AdminCall, BatchCounts, ScanRow, SiteAnswer, SiteOp, SiteWriterRpc, WriterStatus } from "./object-protocol.ts";
import { Projector } from "./projection.ts";
import { sampleNewest } from "./sample-query.ts";
import { SiteDb } from "./site-db.ts";
import {
  changesAfter,
  findByLoc,
  newestChange,
  newsRecords,
  newsStats,
  pendingChanges,
  rangeChangedAfter,
  recentRecords,
  scanPage,
} from "./site-queries.ts";

/** Adoption steps a read may run before it gives up for now (a step is 100 blocks, ~100,000 records); the alarm goes on. */
const READ_ADOPT_STEPS = 5;
/** Rows per scan page (the page also stops at a few MB). */
const MAX_SCAN_PAGE = 10_000;

export class KvSiteWriter extends DurableObject<Env> implements SiteWriterRpc {
  readonly #db: SiteDb;
  #projector: Projector | null = null;
  /** The adoption step running now, if any: one at a time. */
  #adopting: Promise<AdoptProgress> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = new SiteDb(ctx.storage.sql);
  }

  async write(origin: string, op: SiteOp): Promise<SiteAnswer> {
    this.#claim(origin);
    if (this.#db.get("adopted") !== 1) {
      if (this.#adopting) return busy("the site's writer is adopting the records already in KV; nothing of this batch was written", 1);
      const progress = await this.#adoptStep(origin);
      if (!progress.done) {
        const wait = Math.max(0, Math.ceil((progress.resumeAt - Date.now()) / 1000));
        return busy(
          wait > 0
            ? `the site's writer is adopting the records already in KV and waits ${wait} s for KV to settle before it reads them again; nothing of this batch was written`
            : "the site's writer is adopting the records already in KV (one step done); nothing of this batch was written",
          wait,
        );
      }
    }
    const now = Date.now();
    let counts: BatchCounts;
    try {
      counts = this.ctx.storage.transactionSync(() => {
        const stamp = this.#db.commitStamp(op.now);
        return op.kind === "upsert" ? applyUpsert(this.#db, op.records, stamp, now) : applyDelete(this.#db, op.locs, stamp, now);
      });
    } catch (err) {
      console.error("KV writer: batch failed before its commit", err);
      return { ok: false, kind: "failed", message: `${(err as Error).message}; nothing was written` };
    }
    // Committed: from here on the answer is a success, whatever the projection does.
    if (counts.writes > 0) this.#projectSoon(origin, now);
    return { ok: true, result: counts };
  }

  async find(origin: string, loc: string): Promise<FoundRecord | null> {
    await this.#readable(origin);
    return findByLoc(this.#db, origin, loc);
  }

  async changes(origin: string, after: ChangeCursor | null, limit: number, until: number): Promise<ChangePage> {
    await this.#readable(origin);
    return changesAfter(this.#db, after, limit, until);
  }

  async newest(origin: string, until: number): Promise<ChangeStamp | null> {
    await this.#readable(origin);
    return newestChange(this.#db, until);
  }

  async pending(origin: string, after: ChangeStamp): Promise<number> {
    await this.#readable(origin);
    return pendingChanges(this.#db, after);
  }

  async scanPage(origin: string, from: ScanPosition, until: ScanPosition | null, limit: number): Promise<{ rows: ScanRow[]; next: ScanPosition | null }> {
    await this.#readable(origin);
    return scanPage(this.#db, from, until, Math.min(limit, MAX_SCAN_PAGE));
  }

  async newsStats(origin: string, sinceMs: number, untilMs: number): Promise<NewsStats> {
    await this.#readable(origin);
    return newsStats(this.#db, sinceMs, untilMs);
  }

  async newsRecords(origin: string, sinceMs: number, untilMs: number, offset: number, limit: number): Promise<StoredRecord[]> {
    await this.#readable(origin);
    return newsRecords(this.#db, sinceMs, untilMs, offset, limit);
  }

  async recent(origin: string, limit: number): Promise<StoredRecord[]> {
    await this.#readable(origin);
    return recentRecords(this.#db, limit);
  }

  /** Status only: a site still adopting its records answers none, rather than adopt on a status read. */
  async sample(origin: string, limit: number): Promise<SampledRecord[]> {
    this.#claim(origin);
    return this.#db.get("adopted") === 1 ? sampleNewest(this.#db, limit) : [];
  }

  async changedAfter(origin: string, section: string, firstKey: number, lastKey: number, stamp: number): Promise<boolean> {
    await this.#readable(origin);
    return rangeChangedAfter(this.#db, section, firstKey, lastKey, stamp);
  }

  async status(origin: string): Promise<WriterStatus> {
    this.#claim(origin);
    return { ...this.#projectorFor(origin).status(), adopting: this.#db.get("adopted") !== 1 };
  }

  async settle(origin: string, waitMs: number): Promise<WriterStatus> {
    await this.#readable(origin);
    const projector = this.#projectorFor(origin);
    const until = Date.now() + waitMs;
    for (;;) {
      const started = await projector.pass();
      const status = projector.status();
      if (status.pending === 0 || Date.now() >= until) return { ...status, adopting: false };
      // Nothing could start (spaced by KV's per-key rate, backing off, or in flight): wait a little.
      if (started === 0) await new Promise((resolve) => setTimeout(resolve, Math.min(250, Math.max(0, until - Date.now()))));
    }
  }

  /** The admin's sessions, audit trail, refusals and cooldowns of this site (a deployment without D1; admin-tables.ts). */
  async admin(origin: string, call: AdminCall): Promise<AdminAnswer> {
    this.#claim(origin);
    return runAdminCall(this.ctx.storage.sql, origin, call);
  }

  /** The alarm: a projection pass (it sets the next alarm itself while anything is left). */
  override async alarm(): Promise<void> {
    const origin = this.#db.get("origin");
    if (typeof origin !== "string") return;
    if (this.#db.get("adopted") !== 1 && !(await this.#adoptStep(origin)).done) return;
    await this.#projectorFor(origin).pass();
  }

  /** The object is one site's: the first call names it, and every later call must name the same. */
  #claim(origin: string): void {
    const known = this.#db.get("origin");
    if (known === null) this.#db.set("origin", origin);
    else if (known !== origin) throw new Error(`this writer object belongs to ${known}, not ${origin}`);
  }

  /** Sets the alarm for the projection; a failure to do so is logged (the next write or read sets it again). */
  #projectSoon(origin: string, now: number): void {
    try {
      this.#projectorFor(origin).reschedule(now);
    } catch (err) {
      console.error("KV writer: could not schedule the projection", err);
    }
  }

  #projectorFor(origin: string): Projector {
    this.#projector ??= new Projector(
      this.#db,
      origin,
      () => this.env.URLS,
      (at) => {
        void this.ctx.storage.getAlarm().then((current) => (current === null || current > at ? this.ctx.storage.setAlarm(at) : undefined));
      },
    );
    return this.#projector;
  }

  async #adoptStep(origin: string): Promise<AdoptProgress> {
    if (this.#adopting) return this.#adopting;
    this.#adopting = adoptStep(this.#db, this.env.URLS, origin, Date.now()).finally(() => {
      this.#adopting = null;
    });
    const progress = await this.#adopting;
    // Done: project what adoption marked; not yet: the alarm goes on with the next step meanwhile
    // (at once, or when KV has had time to settle before the next pass).
    if (progress.done) this.#projectSoon(origin, Date.now());
    else await this.ctx.storage.setAlarm(progress.resumeAt);
    return progress;
  }

  /** Reads wait for adoption (a few steps at most); a site still adopting after them is an error to retry. */
  async #readable(origin: string): Promise<void> {
    this.#claim(origin);
    for (let step = 0; this.#db.get("adopted") !== 1; step++) {
      if (step === READ_ADOPT_STEPS) throw new Error(`the writer of ${origin} is still adopting the records already in KV; try again shortly`);
      const progress = await this.#adoptStep(origin);
      if (!progress.done && progress.resumeAt > Date.now()) {
        throw new Error(`the writer of ${origin} is adopting the records already in KV and waits for KV to settle; try again in a minute`);
      }
    }
  }
}

const busy = (message: string, retryAfter: number): SiteAnswer => ({ ok: false, kind: "busy", message, retryAfter });
