/**
 * KvWriterClient: the KV store's RecordWriter as the Worker uses it, the client of the writer
 * objects (writer-object.ts). Each site's part of a batch goes to that site's object, which commits
 * it in its SQLite; the answer becomes the port's result, or the store error the admin API maps to a
 * status (src/store/errors.ts): busy → 503 + Retry-After, failed → 500.
 */
import type { ValidRecord } from "../../core/validate.ts";
import { PartialWriteError, StoreBusyError } from "../../store/errors.ts";
import type { DeleteResult, RecordWriter, UpsertResult } from "../../store/port.ts";
import { groupBy, originOf } from "./by-origin.ts";
import type { BatchCounts } from "./object-protocol.ts";
import { type SiteAnswer, type SiteOp, type SiteWriters, writerOf } from "./object-protocol.ts";

export class KvWriterClient implements RecordWriter {
  readonly #writers: SiteWriters;

  constructor(writers: SiteWriters) {
    this.#writers = writers;
  }

  /** `now`: an explicit change stamp (tests); without it each site's object stamps its batch when it commits. */
  async upsert(records: readonly ValidRecord[], now?: number): Promise<UpsertResult> {
    const total: UpsertResult = { atomic: true, writes: 0, inserted: 0, updated: 0, unchanged: 0 };
    const done: string[] = [];
    const groups = groupBy(records, (r) => r.origin);
    for (const [origin, group] of groups) {
      const r = await this.#send(origin, { kind: "upsert", records: group, ...(now === undefined ? {} : { now }) }, done);
      total.writes += r.writes;
      total.inserted += r.inserted;
      total.updated += r.updated;
      total.unchanged += r.unchanged;
    }
    // One site: one transaction in its object. Several: one each, so a failure can leave some written.
    total.atomic = groups.size <= 1;
    return total;
  }

  async delete(locs: readonly string[], now?: number): Promise<DeleteResult> {
    const distinct = [...new Set(locs)];
    const total: DeleteResult = { atomic: true, writes: 0, deleted: 0, alreadyDeleted: 0, notFound: 0 };
    const done: string[] = [];
    const groups = groupBy(distinct, originOf);
    for (const [origin, group] of groups) {
      const r = await this.#send(origin, { kind: "delete", locs: group, ...(now === undefined ? {} : { now }) }, done);
      total.writes += r.writes;
      total.deleted += r.deleted;
      total.alreadyDeleted += r.alreadyDeleted;
    }
    // Locs that are not URLs at all were never stored either.
    total.notFound = distinct.length - total.deleted - total.alreadyDeleted;
    total.atomic = groups.size <= 1;
    return total;
  }

  /** One site's part; `done` lists the sites already committed, so an error can say so. */
  async #send(origin: string, op: SiteOp, done: string[]): Promise<BatchCounts> {
    const before = done.length === 0 ? "" : `the records of ${done.join(", ")} were written; `;
    let answer: SiteAnswer;
    try {
      answer = await writerOf(this.#writers, origin).write(origin, op);
    } catch (err) {
      // The object was reset or unreachable mid-call: its SQLite transaction either committed or did not.
      throw new StoreBusyError(
        "unavailable",
        `${before}the writer of ${origin} stopped (${(err as Error).message}); its batch is committed whole or not at all: send the batch again`,
        1,
      );
    }
    if (answer.ok) {
      done.push(origin);
      return answer.result;
    }
    const message = `${before}${origin}: ${answer.message}`;
    if (answer.kind === "busy") throw new StoreBusyError("busy", message, answer.retryAfter);
    if (done.length > 0) throw new PartialWriteError(message);
    throw new Error(message);
  }
}
