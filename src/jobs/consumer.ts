/**
 * The JOBS queue's consumer (called by src/index.ts with its dispatch table, inside the
 * invocation's meter: src/jobs/meter.ts): each message is one step of a job's chain (src/jobs/store.ts).
 *
 *  1. The step begins only with its chain's token and step and the step's lease: a stale message
 *     (another chain, an earlier step, a chain that ended) or a duplicate delivery is acknowledged
 *     as a no-op before any work. A message without a chain (sent by hand) is a request.
 *  2. The handler runs; its outcome and usage are kept.
 *  3. It asked to continue: the chain's next message; else the chain ends, or runs once more when a
 *     request came while it ran.
 *
 * A step that throws is retried by the queue (retry_delay, max_retries), its lease let go. A step
 * killed by a limit runs no `finally`: its retry finds its own message holding the lease, takes it
 * over at once and counts the death as a failure; after max_retries the message goes to the
 * dead-letter queue, whose batches only mark the job dead (the chain ends; the next heartbeat starts it again).
 */
import { shownUrl } from "../mirror/failure.ts";
import type { Services } from "../services-type.ts";
import { JOB_LEASE_MS, LEASE_RENEW_MS, RETRY_DELAY_SECONDS, STEP_BUDGET_MS } from "./budget.ts";
import type { Continuation, JobHandler, RegisteredSites } from "./context.ts";
import { type Job, type JobKind, mirrorUrlOf, parseJob } from "./messages.ts";
import type { Meter } from "./meter.ts";
import { siteLevelOfPartitioned } from "./partitions.ts";
import { newChain } from "./scheduler.ts";

/** A dead-letter queue is named after its queue with this suffix (wrangler.jsonc). */
const DEAD_LETTER_SUFFIX = "-dlq";

export type JobHandlers = Readonly<Record<JobKind, JobHandler>>;
/**
 * The services of the job's database (src/services.ts, wired by the entry); null when its site is
 * neither configured nor a live registered one (deleted since the job was queued).
 */
type ServicesOf = (env: Env, job: Job) => Services | null | Promise<Services | null>;

/** What a log line or status may show of a job's target: a mirror's URL without its query. */
const shown = (job: Job): string => (job.kind === "mirror" ? shownUrl(mirrorUrlOf(job.origin)) : job.origin);

function describe(err: unknown, job: Job): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return job.kind === "mirror" ? text.split(mirrorUrlOf(job.origin)).join(shownUrl(mirrorUrlOf(job.origin))) : text;
}

const log = (fields: Record<string, unknown>): void => console.log(JSON.stringify({ event: "sitemap.job", ...fields }));

/** What the entry hands the consumer for every message of its invocation. */
interface Consumer {
  handlers: JobHandlers;
  servicesOf: ServicesOf;
  /** The site registry and its sites' wiring; null without a registry. */
  sites: (env: Env) => RegisteredSites | null;
  /** The invocation's meter (src/jobs/meter.ts). */
  meter: Meter;
  /** How often a running step renews its lease (default LEASE_RENEW_MS; tests shorten it). */
  renewEveryMs?: number;
}

async function runOne(
  message: Message<unknown>,
  job: Job,
  env: Env,
  ctx: ExecutionContext,
  { handlers, servicesOf, sites, meter, renewEveryMs = LEASE_RENEW_MS }: Consumer,
): Promise<void> {
  let services: Services | null;
  try {
    services = await servicesOf(env, job);
  } catch (err) {
    // A bad configuration: retrying cannot help; the heartbeat after the fix schedules it again.
    console.error(JSON.stringify({ event: "sitemap.job", kind: job.kind, target: shown(job), outcome: "config", error: describe(err, job) }));
    message.ack();
    return;
  }
  if (services === null) {
    // A site removed since the job was queued (a registered site deleted): nothing to run, nothing to retry.
    log({ kind: job.kind, target: shown(job), outcome: "no such site" });
    message.ack();
    return;
  }
  const scheduler = services.jobs;
  if (!scheduler) {
    message.ack();
    return;
  }
  const state = scheduler.state;
  const startedAt = Date.now();
  let chain = job.chain;
  let step = job.step;
  if (chain === undefined && services.partitions && siteLevelOfPartitioned(job)) {
    // A site-level request of a site now partitioned: one request per partition (its first shares this row).
    await scheduler.request(job.kind, job.origin, 0, job.trigger, job.full ? { full: true } : {});
    log({ kind: job.kind, target: shown(job), outcome: "per-partition" });
    message.ack();
    return;
  }
  if (chain === undefined) {
    // No chain: a request, run now if no chain is live (a live one takes it).
    chain = newChain();
    step = 0;
    if (!(await state.request({ kind: job.kind, origin: job.origin, dueAt: startedAt, chain, ...(job.full ? { full: true } : {}) }, startedAt))) {
      log({ kind: job.kind, target: shown(job), outcome: "taken by the live chain" });
      message.ack();
      return;
    }
  }
  const holder = { id: message.id, attempt: message.attempts };
  const begun = await state.begin(job.kind, job.origin, chain, step, holder, startedAt, JOB_LEASE_MS);
  if (begun === null) {
    // Another chain, an earlier step, an ended chain, or a delivery of this step already running.
    log({ kind: job.kind, target: shown(job), step, outcome: "no-op: not the chain's current step" });
    message.ack();
    return;
  }
  const current: Job = { ...job, chain, step, ...(job.full || begun.full ? { full: true } : {}) };
  let next: Continuation | null = null;
  // The lease is renewed while the step runs, so a duplicate delivery never reruns a long step beside it.
  const renewal = setInterval(() => {
    state.renew(job.kind, job.origin, chain, holder, Date.now() + JOB_LEASE_MS).catch(() => undefined);
  }, renewEveryMs);
  try {
    const outcome = await handlers[job.kind](current, {
      services,
      sites: sites(env),
      env,
      ctx,
      scheduler,
      usage: () => meter.reading(),
      deadline: startedAt + STEP_BUDGET_MS,
      chain,
      tookOver: begun.tookOver,
      continueWith: (c) => {
        next = c;
      },
    });
    const usage = meter.reading();
    log({ kind: job.kind, target: shown(job), trigger: job.trigger, step, outcome, usage, ...(begun.tookOver ? { tookOver: true } : {}) });
    await state.succeeded(job.kind, job.origin, outcome, usage, startedAt);
    const after = next as Continuation | null;
    if (after) {
      await scheduler.continueChain(current, holder, step + 1, after.delaySeconds, "continue", {
        ...(after.full ? { full: true } : {}),
        ...(after.after === undefined ? {} : { after: after.after }),
      });
    } else {
      const rerun = await state.finish(job.kind, job.origin, chain, holder, Date.now());
      if (rerun) {
        const { full: _, after: _after, ...rest } = current;
        await scheduler.rerun(
          { ...rest, trigger: "requested", step: rerun.step, ...(rerun.full ? { full: true } : {}) },
          (rerun.dueAt - Date.now()) / 1000,
          step,
        );
      }
    }
    message.ack();
  } catch (err) {
    const error = describe(err, job);
    const usage = meter.reading();
    console.error(
      JSON.stringify({
        event: "sitemap.job",
        kind: job.kind,
        target: shown(job),
        trigger: job.trigger,
        attempt: message.attempts,
        outcome: "failed",
        error,
        usage,
      }),
    );
    const now = Date.now();
    await state.failed(job.kind, job.origin, chain, holder, error, usage, now, now + RETRY_DELAY_SECONDS * 1000).catch(() => undefined);
    message.retry();
  } finally {
    clearInterval(renewal);
  }
}

async function markDead(message: Message<unknown>, job: Job, env: Env, servicesOf: ServicesOf): Promise<void> {
  try {
    await (await servicesOf(env, job))?.jobs?.state.dead(job.kind, job.origin, job.chain ?? null, Date.now());
    console.error(JSON.stringify({ event: "sitemap.job.dead", kind: job.kind, target: shown(job) }));
  } catch (err) {
    console.error("dead job not recorded:", err instanceof Error ? err.message : err);
  }
  message.ack();
}

/** Runs a batch of the JOBS queue (or marks a batch of its dead-letter queue), counted by the invocation's meter. Never throws. */
export async function consumeJobs(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext, consumer: Consumer): Promise<void> {
  const dead = batch.queue.endsWith(DEAD_LETTER_SUFFIX);
  for (const message of batch.messages) {
    const job = parseJob(message.body);
    if (job === null) {
      console.error(JSON.stringify({ event: "sitemap.job", outcome: "not-a-job", queue: batch.queue }));
      message.ack();
      continue;
    }
    if (dead) await markDead(message, job, env, consumer.servicesOf);
    else await runOne(message, job, env, ctx, consumer);
  }
}
