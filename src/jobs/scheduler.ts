/**
 * Sends jobs to the JOBS queue. `request` is the debounced path every write, continuation and
 * chain takes: it claims the job's next delivery in D1 (src/jobs/store.ts) and sends one message
 * only when none is pending, so a burst of writes to a site sends one. A pending message is
 * delivered after the request (its due time is later), so the job it starts sees every write
 * acknowledged before the request: nothing is lost by not sending.
 */
import type { Job, JobKind } from "./messages.ts";
import type { JobStateStore } from "./store.ts";

/** The part of a Queue producer binding the jobs use (`env.JOBS`). */
export interface JobQueue {
  send(body: Job, options?: { delaySeconds?: number }): Promise<unknown>;
  sendBatch(messages: Iterable<{ body: Job; delaySeconds?: number }>): Promise<unknown>;
}

/** Messages per sendBatch call (the Queues limit). */
const BATCH = 100;
/** The longest delay Queues accepts (24 h). */
const MAX_DELAY_SECONDS = 24 * 3600;

const delayOf = (seconds: number): number => Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(seconds)));

export class JobScheduler {
  readonly #state: JobStateStore;
  readonly #queue: JobQueue;
  readonly #clock: () => number;
  /** Carried by every job this scheduler sends: a partition's scheduler names its partition (src/partitions/jobs.ts). */
  readonly #stamp: Pick<Job, "partition">;

  constructor(state: JobStateStore, queue: JobQueue, clock: () => number = Date.now, stamp: Pick<Job, "partition"> = {}) {
    this.#state = state;
    this.#queue = queue;
    this.#clock = clock;
    this.#stamp = stamp;
  }

  /**
   * Debounced: schedules `kind` for `origin` in `delaySeconds` unless a message for it is already
   * pending. true when a message was sent. A failed send gives the claim back and throws.
   */
  async request(kind: JobKind, origin: string, delaySeconds: number, trigger: string, step = 0, extra: Pick<Job, "full"> = {}): Promise<boolean> {
    const now = this.#clock();
    const delay = delayOf(delaySeconds);
    const dueAt = now + delay * 1000;
    // A site pass is sent whatever is pending (a pending job would not do the whole pass); still claimed, so status shows it.
    const claimed = await this.#state.claim(kind, origin, dueAt, extra.full ? Number.MAX_SAFE_INTEGER : now);
    if (!claimed) return false;
    try {
      await this.#queue.send({ kind, origin, trigger, step, ...extra, ...this.#stamp }, { delaySeconds: delay });
    } catch (err) {
      await this.#state.unclaim(kind, origin, dueAt).catch(() => undefined);
      throw err;
    }
    return true;
  }

  /** Sends one job now (or after `delaySeconds`), whatever is pending. */
  async send(job: Job, delaySeconds = 0): Promise<void> {
    await this.#queue.send({ ...job, ...this.#stamp }, { delaySeconds: delayOf(delaySeconds) });
  }

  /** Sends many jobs in batches of 100 (the heartbeat, which claimed them with `claimMany`). */
  async sendAll(jobs: readonly { job: Job; delaySeconds: number }[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += BATCH) {
      await this.#queue.sendBatch(jobs.slice(i, i + BATCH).map(({ job, delaySeconds }) => ({ body: job, delaySeconds: delayOf(delaySeconds) })));
    }
  }

  /** The jobs' state (status, run records). */
  get state(): JobStateStore {
    return this.#state;
  }

  /** The same queue and state (a partition's: its database's jobs table), every job it sends carrying `partition`. */
  forPartition(partition: number): JobScheduler {
    return new JobScheduler(this.#state, this.#queue, this.#clock, { partition });
  }
}
