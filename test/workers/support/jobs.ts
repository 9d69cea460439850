/**
 * The JOBS queue in workerd tests: a recording producer in place of `env.JOBS`, and a drain that
 * delivers what it recorded to the real consumer (src/index.ts `queue`), one message per batch as
 * wrangler.jsonc configures it, with the queue's retry and dead-letter rules.
 */
import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from "cloudflare:test";
import worker from "../../../src/index.ts";
import type { Job } from "../../../src/jobs/messages.ts";

/** wrangler.jsonc: the consumer's max_retries, and the queue names. */
const MAX_RETRIES = 5;
const QUEUE = "edge-sitemaps-jobs";
const DEAD_LETTER_QUEUE = "edge-sitemaps-jobs-dlq";

export interface Sent {
  body: Job;
  delaySeconds: number;
  /** When it may be delivered (ms). */
  dueAt: number;
  attempts: number;
  /** The message's id, the same for each redelivery. */
  id: string;
}

export class RecordingQueue {
  readonly pending: Sent[] = [];
  readonly sent: Sent[] = [];
  readonly dead: Sent[] = [];

  #add(body: Job, delaySeconds = 0): void {
    const sent = { body: structuredClone(body), delaySeconds, dueAt: Date.now() + delaySeconds * 1000, attempts: 0, id: `q${++ids}` };
    this.sent.push(sent);
    this.pending.push(sent);
  }

  async send(body: Job, options?: { delaySeconds?: number }): Promise<void> {
    this.#add(body, options?.delaySeconds);
  }

  async sendBatch(messages: Iterable<{ body: Job; delaySeconds?: number }>): Promise<void> {
    for (const m of messages) this.#add(m.body, m.delaySeconds);
  }
}

/** `env` with a recording JOBS queue. */
export function withJobs(env: Env): { env: Env; queue: RecordingQueue } {
  const queue = new RecordingQueue();
  return { env: { ...env, JOBS: queue as unknown as Queue }, queue };
}

export interface Delivery {
  job: Job;
  /** acked, retried, or dead (moved to the dead-letter queue after its last retry). */
  result: "acked" | "retried" | "dead";
}

let ids = 0;

/** Delivers one message to the consumer of `queueName`, as its own invocation (`id`: the message's, for a redelivery of the same message). */
/** The tiered Workers Cache as an invocation's `ctx.cache` sees it: not emulated locally, so a test hands in its own. */
export interface WorkersCache {
  purge(options: { tags: string[] }): Promise<unknown>;
}

export async function deliver(env: Env, body: unknown, attempts = 1, queueName = QUEUE, id = `m${++ids}`, cache?: WorkersCache) {
  const batch = createMessageBatch(queueName, [{ id, timestamp: Date.now(), attempts, body }]);
  const ctx = createExecutionContext();
  if (cache) Object.assign(ctx, { cache });
  await worker.queue(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

export interface DrainOptions {
  /** Messages due later than this from now are left pending (ms; default 2 s). */
  maxWaitMs?: number;
  /** The env each invocation gets (to count its binding calls, say). */
  perInvocation?: (env: Env) => Env;
  /** Stop after this many invocations (a runaway chain fails the test). */
  maxInvocations?: number;
  /** Deliver delayed messages at once (as if their delay had passed), whatever maxWaitMs says. */
  early?: boolean;
  /** Each invocation's `ctx.cache` (the tiered Workers Cache); none by default, as locally. */
  cache?: WorkersCache;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Delivers pending messages, earliest due first (waiting for them), until none is due within maxWaitMs. */
export async function drain(env: Env, queue: RecordingQueue, options: DrainOptions = {}): Promise<Delivery[]> {
  const { maxWaitMs = 2_000, perInvocation = (e) => e, maxInvocations = 500, early = false, cache } = options;
  const out: Delivery[] = [];
  for (;;) {
    queue.pending.sort((a, b) => a.dueAt - b.dueAt);
    const next = queue.pending[0];
    if (!next || (!early && next.dueAt > Date.now() + maxWaitMs)) return out;
    if (out.length >= maxInvocations) throw new Error(`more than ${maxInvocations} invocations: a job does not converge`);
    queue.pending.shift();
    if (!early && next.dueAt > Date.now()) await sleep(next.dueAt - Date.now());
    if (early && next.dueAt > Date.now()) {
      // Delivered before its time, as if the time had come: its claim is due now, so later writes claim anew.
      await env.DB.prepare("UPDATE jobs SET due_at = MIN(due_at, ?3) WHERE kind = ?1 AND origin = ?2")
        .bind(next.body.kind, next.body.origin, Date.now())
        .run();
    }
    next.attempts++;
    const result = await deliver(perInvocation(env), next.body, next.attempts, QUEUE, next.id, cache);
    const retried = result.retryBatch.retry || result.retryMessages.length > 0;
    if (!retried) {
      out.push({ job: next.body, result: "acked" });
    } else if (next.attempts <= MAX_RETRIES) {
      out.push({ job: next.body, result: "retried" });
      queue.pending.push({ ...next, dueAt: Date.now() });
    } else {
      out.push({ job: next.body, result: "dead" });
      queue.dead.push(next);
      await deliver(perInvocation(env), next.body, 1, DEAD_LETTER_QUEUE);
    }
  }
}

/**
 * One cron trigger, then every job it (and its jobs) queued, delayed ones at once: what `scheduled`
 * used to do inline. When `env.JOBS` already records (writes sent their jobs there), the jobs those
 * writes queued run too: the heartbeat leaves a site whose job is pending to that job.
 */
export async function runCron(env: Env, options: DrainOptions = {}): Promise<Delivery[]> {
  const queue = env.JOBS instanceof RecordingQueue ? env.JOBS : new RecordingQueue();
  const e = { ...env, JOBS: queue as unknown as Queue };
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), e, createExecutionContext());
  return drain(e, queue, { early: true, ...options });
}
