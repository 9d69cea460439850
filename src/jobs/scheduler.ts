/**
 * Sends jobs to the JOBS queue, one chain per job and target (src/jobs/store.ts, docs/jobs.md "One
 * chain per job"). `request` is the path every write, admin action and chain link takes: it starts
 * the job's chain in D1 and sends its first message only when no chain is live; a live chain takes
 * the request instead (it runs once more if the request came while it ran), so a burst of writes to
 * a site sends one message, and a heartbeat or a duplicate never starts a second chain. A pending
 * message is delivered after the request (its due time is later), so the job it starts sees every
 * write acknowledged before the request: nothing is lost by not sending.
 */
import { QUEUE_LIMITS, messageBytes } from "./message-size.ts";
import type { Job, JobKind } from "./messages.ts";
import type { Holder, JobStateStore } from "./store.ts";

/** The part of a Queue producer binding the jobs use (`env.JOBS`). */
export interface JobQueue {
  send(body: Job, options?: { delaySeconds?: number }): Promise<unknown>;
  sendBatch(messages: Iterable<{ body: Job; delaySeconds?: number }>): Promise<unknown>;
}

/**
 * Splits messages, in order, into `sendBatch` calls Queues takes: at most 100 messages and 256 KB,
 * each message counted as the runtime sends it (JSON, no content type given) with its ~100 bytes
 * of metadata, as the meter counts it (src/jobs/metered-env.ts). A message is bounded far below the
 * 128 KB of one (docs/jobs.md "Messages"), so every batch holds at least one.
 */
export function sendBatches<T>(items: readonly T[], bodyOf: (item: T) => Job): T[][] {
  const { queueBatchMessages, queueBatchBytes, queueMessageMetadataBytes } = QUEUE_LIMITS;
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = messageBytes(bodyOf(item), undefined) + queueMessageMetadataBytes;
    if (batch.length > 0 && (batch.length === queueBatchMessages || bytes + size > queueBatchBytes)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
/** The longest delay Queues accepts (24 h). */
const MAX_DELAY_SECONDS = 24 * 3600;

const delayOf = (seconds: number): number => Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(seconds)));

/** A chain's token: short, unguessable enough to never collide. */
export const newChain = (): string => crypto.randomUUID();

export class JobScheduler {
  readonly #state: JobStateStore;
  readonly #queue: JobQueue;
  readonly #clock: () => number;
  /** Carried by every job this scheduler sends: a partition's scheduler names its partition (src/jobs/partitions.ts). */
  readonly #stamp: Pick<Job, "partition">;

  constructor(state: JobStateStore, queue: JobQueue, clock: () => number = Date.now, stamp: Pick<Job, "partition"> = {}) {
    this.#state = state;
    this.#queue = queue;
    this.#clock = clock;
    this.#stamp = stamp;
  }

  /**
   * Asks for `kind` on `origin` in `delaySeconds`: starts its chain and sends its first message
   * unless a chain is live (which then takes the request). true when a message was sent. A failed
   * send gives the chain back and throws.
   */
  async request(kind: JobKind, origin: string, delaySeconds: number, trigger: string, extra: Pick<Job, "full"> = {}): Promise<boolean> {
    const now = this.#clock();
    const delay = delayOf(delaySeconds);
    const chain = newChain();
    const started = await this.#state.request({ kind, origin, dueAt: now + delay * 1000, chain, ...(extra.full ? { full: true } : {}) }, now);
    if (!started) return false;
    try {
      await this.#queue.send({ kind, origin, trigger, step: 0, ...extra, ...this.#stamp, chain }, { delaySeconds: delay });
    } catch (err) {
      await this.#state.unclaim(kind, origin, chain).catch(() => undefined);
      throw err;
    }
    return true;
  }

  /**
   * The chain's next message after `delaySeconds`, sent by the delivery holding the step's lease
   * (`holder`); false when that is no longer this delivery or the chain no longer `job.chain`.
   */
  async continueChain(
    job: Job,
    holder: Holder,
    step: number,
    delaySeconds: number,
    trigger: string,
    extra: Pick<Job, "full" | "after"> = {},
  ): Promise<boolean> {
    if (job.chain === undefined) return false;
    const delay = delayOf(delaySeconds);
    if (!(await this.#state.advance(job.kind, job.origin, job.chain, holder, step, this.#clock() + delay * 1000))) return false;
    const { full: _, after: _after, ...rest } = job;
    await this.#sendOrRetreat({ ...rest, trigger, step, ...extra }, delay, job.step);
    return true;
  }

  /**
   * Sends a chain's next message, the chain already moved to its step in D1; a failed send moves
   * the chain back to `back` (the step whose delivery sends it) and throws, so that delivery's
   * retry runs its step again and sends the message then, instead of the chain stalling until
   * CHAIN_LOST_MS.
   */
  async #sendOrRetreat(job: Job, delay: number, back: number): Promise<void> {
    try {
      await this.#queue.send({ ...job, ...this.#stamp }, { delaySeconds: delay });
    } catch (err) {
      if (job.chain !== undefined) await this.#state.retreat(job.kind, job.origin, job.chain, job.step, back).catch(() => undefined);
      throw err;
    }
  }

  /** Sends the first messages of chains the heartbeat started (`state.requestMany`), in batches Queues takes (`sendBatches`). */
  async sendAll(jobs: readonly { job: Job; delaySeconds: number }[]): Promise<void> {
    for (const batch of sendBatches(jobs, (j) => j.job)) {
      await this.#queue.sendBatch(batch.map(({ job, delaySeconds }) => ({ body: job, delaySeconds: delayOf(delaySeconds) })));
    }
  }

  /** Sends a message as it is. */
  async send(job: Job, delaySeconds = 0): Promise<void> {
    await this.#queue.send({ ...job, ...this.#stamp }, { delaySeconds: delayOf(delaySeconds) });
  }

  /**
   * Sends a requested rerun, its chain already moved to `job.step` by `state.finish` (from step
   * `back`): a failed send moves it back, as `continueChain` does.
   */
  async rerun(job: Job, delaySeconds: number, back: number): Promise<void> {
    await this.#sendOrRetreat(job, delayOf(delaySeconds), back);
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
