/**
 * The JOBS queue's consumer (called by src/index.ts with its dispatch table): each message is one
 * job, run on bindings counted by a meter (src/jobs/meter.ts), its outcome and usage kept in the
 * jobs' state. A job that throws is retried by the queue (retry_delay, max_retries), then goes to
 * the dead-letter queue, whose batches only mark the job dead (its last error is already kept) so
 * that status shows it until the next heartbeat's run of it succeeds.
 */
import { shownUrl } from "../mirror/failure.ts";
import type { Services } from "../services-type.ts";
import type { JobHandler } from "./context.ts";
import { type Job, type JobKind, parseJob } from "./messages.ts";
import { Meter, meteredEnv } from "./meter.ts";

/** A dead-letter queue is named after its queue with this suffix (wrangler.jsonc). */
const DEAD_LETTER_SUFFIX = "-dlq";

export type JobHandlers = Readonly<Record<JobKind, JobHandler>>;
/** The services of the job's database (src/services.ts, wired by the entry). */
export type ServicesOf = (env: Env, job: Job) => Services;

/** What a log line or status may show of a job's target: a mirror's URL without its query. */
const shown = (job: Job): string => (job.kind === "mirror" ? shownUrl(job.origin) : job.origin);

function describe(err: unknown, job: Job): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return job.kind === "mirror" ? text.split(job.origin).join(shownUrl(job.origin)) : text;
}

async function runOne(message: Message<unknown>, job: Job, env: Env, ctx: ExecutionContext, handlers: JobHandlers, servicesOf: ServicesOf): Promise<void> {
  const meter = new Meter();
  const metered = meteredEnv(env, meter);
  let services: Services;
  try {
    services = servicesOf(metered, job);
  } catch (err) {
    // A bad configuration: retrying cannot help; the heartbeat after the fix schedules it again.
    console.error(JSON.stringify({ event: "sitemap.job", kind: job.kind, target: shown(job), outcome: "config", error: describe(err, job) }));
    message.ack();
    return;
  }
  const scheduler = services.jobs;
  if (!scheduler) {
    message.ack();
    return;
  }
  const startedAt = Date.now();
  try {
    const outcome = await handlers[job.kind](job, { services, env: metered, ctx, scheduler, usage: () => meter.reading() });
    const usage = meter.reading();
    console.log(JSON.stringify({ event: "sitemap.job", kind: job.kind, target: shown(job), trigger: job.trigger, step: job.step, outcome, usage }));
    await scheduler.state.succeeded(job.kind, job.origin, outcome, usage, startedAt);
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
    await scheduler.state.failed(job.kind, job.origin, error, usage, Date.now()).catch(() => undefined);
    message.retry();
  }
}

async function markDead(message: Message<unknown>, job: Job, env: Env, servicesOf: ServicesOf): Promise<void> {
  try {
    await servicesOf(env, job).jobs?.state.dead(job.kind, job.origin, Date.now());
    console.error(JSON.stringify({ event: "sitemap.job.dead", kind: job.kind, target: shown(job) }));
  } catch (err) {
    console.error("dead job not recorded:", err instanceof Error ? err.message : err);
  }
  message.ack();
}

/** Runs a batch of the JOBS queue (or marks a batch of its dead-letter queue). Never throws. */
export async function consumeJobs(
  batch: MessageBatch<unknown>,
  env: Env,
  ctx: ExecutionContext,
  handlers: JobHandlers,
  servicesOf: ServicesOf,
): Promise<void> {
  const dead = batch.queue.endsWith(DEAD_LETTER_SUFFIX);
  for (const message of batch.messages) {
    const job = parseJob(message.body);
    if (job === null) {
      console.error(JSON.stringify({ event: "sitemap.job", outcome: "not-a-job", queue: batch.queue }));
      message.ack();
      continue;
    }
    if (dead) await markDead(message, job, env, servicesOf);
    else await runOne(message, job, env, ctx, handlers, servicesOf);
  }
}
