/**
 * The KV store's RecordWriter as the Worker uses it: each site's part of a batch goes to that
 * site's writer object (site-writer.ts), which runs it after the site's other batches. The object
 * answers in plain values; this turns them into the port's results and the store errors the admin
 * API maps to statuses (src/store/errors.ts): busy → 503 + Retry-After, budget → 413, partial → 500.
 */
import type { ValidRecord } from "../../core/validate.ts";
import { PartialWriteError, StoreBudgetError, StoreBusyError } from "../../store/errors.ts";
import type { DeleteResult, RecordWriter, UpsertResult } from "../../store/port.ts";
import { groupBy, originOf } from "./plan.ts";
import type { SiteAnswer, SiteOp, SiteWriters } from "./site-protocol.ts";
import type { KvDeleteResult, KvUpsertResult } from "./writer.ts";

export class SerialisedKvWriter implements RecordWriter {
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  async upsert(records: readonly ValidRecord[], now = Date.now()): Promise<UpsertResult> {
    const total: UpsertResult = { atomic: false, writes: 0, inserted: 0, updated: 0, unchanged: 0 };
    const done: string[] = [];
    for (const [origin, group] of groupBy(records, (r) => r.origin)) {
      const r = (await this.#send(origin, { kind: "upsert", records: group, now }, done)) as KvUpsertResult;
      total.writes += r.writes;
      total.inserted += r.inserted;
      total.updated += r.updated;
      total.unchanged += r.unchanged;
    }
    return total;
  }

  async delete(locs: readonly string[], now = Date.now()): Promise<DeleteResult> {
    const distinct = [...new Set(locs)];
    const total: DeleteResult = { atomic: false, writes: 0, deleted: 0, alreadyDeleted: 0, notFound: 0 };
    const done: string[] = [];
    for (const [origin, group] of groupBy(distinct, originOf)) {
      const r = (await this.#send(origin, { kind: "delete", locs: group, now }, done)) as KvDeleteResult;
      total.writes += r.writes;
      total.deleted += r.deleted;
      total.alreadyDeleted += r.alreadyDeleted;
    }
    // Locs that are not URLs at all were never stored either.
    total.notFound = distinct.length - total.deleted - total.alreadyDeleted;
    return total;
  }

  /** One site's part; `done` lists the sites already written, so an error can say so. */
  async #send(origin: string, op: SiteOp, done: string[]): Promise<KvUpsertResult | KvDeleteResult> {
    const before = done.length === 0 ? "" : `the records of ${done.join(", ")} were written; `;
    let answer: SiteAnswer;
    try {
      answer = await this.#writers.get(this.#writers.idFromName(origin) as never).write(op);
    } catch (err) {
      // The object was reset or unreachable mid-call: its journal finishes whatever it began.
      throw new StoreBusyError(
        "unavailable",
        `${before}the writer of ${origin} stopped (${(err as Error).message}); part of its records may be written, and the next batch for the site finishes them: send the batch again`,
        1,
      );
    }
    if (answer.ok) {
      done.push(origin);
      return answer.result;
    }
    const message = `${before}${origin}: ${answer.message}`;
    if (answer.kind === "busy") throw new StoreBusyError("busy", message, answer.retryAfter);
    if (answer.kind === "budget") throw new StoreBudgetError(message);
    if (answer.kind === "partial" || done.length > 0) throw new PartialWriteError(message);
    throw new Error(message);
  }
}
