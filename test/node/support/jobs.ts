/**
 * The cron only schedules (docs/jobs.md): after `scheduled`, the jobs run on the local queue's
 * consumer. These wait for them the way an operator would see it, from the jobs' table: no job
 * with a live chain (a message on its way or a step running) and none being retried.
 */
import type { TestHarness } from "wrangler";
import { type Job, MAX_STEPS } from "../../../src/jobs/messages.ts";

const PENDING = `SELECT COUNT(*) AS n FROM jobs WHERE chain IS NOT NULL OR (error IS NOT NULL AND dead_at IS NULL)`;

/** Waits until every job has run (up to `timeoutMs`). */
async function jobsDone(db: D1Database, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const pending = await db.prepare(PENDING).first<number>("n");
    if (pending === 0) return;
    if (Date.now() > until) throw new Error(`${pending} job(s) still pending after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One cron trigger, then every job it queued (and their continuations) run. */
export async function cronAndJobs(harness: TestHarness, db: D1Database): Promise<{ outcome: string }> {
  const result = await harness.getWorker().scheduled({ cron: "17 * * * *", scheduledTime: new Date() });
  await jobsDone(db);
  return result;
}

/**
 * One invocation of each `kind` job for `targets`, without their continuations: the messages go on
 * the Worker's own queue marked as the last step of their chain (MAX_STEPS), so a job that leaves
 * work stops there, and one that finishes still starts the next link (a mirror's regeneration).
 * For tests that watch a bounded step at a time, as the platform runs one invocation.
 */
export async function oneStepEach(env: Env, kind: Job["kind"], targets: readonly string[]): Promise<void> {
  const now = Date.now();
  for (const origin of targets) {
    // A chain of its own at its last step (src/jobs/store.ts), so that jobsDone waits for it and it runs once.
    const chain = `test-step-${crypto.randomUUID()}`;
    await env.DB.prepare(
      `INSERT INTO jobs (kind, origin, due_at, chain, chain_step) VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (kind, origin) DO UPDATE SET due_at = ?3, chain = ?4, chain_step = ?5, lease_holder = NULL, lease_until = 0`,
    )
      .bind(kind, origin, now, chain, MAX_STEPS)
      .run();
    await (env.JOBS as unknown as { send(body: Job): Promise<void> }).send({ kind, origin, trigger: "test-step", step: MAX_STEPS, chain });
  }
  await jobsDone(env.DB);
}
