/**
 * The cron only schedules (docs/jobs.md): after `scheduled`, the jobs run on the local queue's
 * consumer. These wait for them the way an operator would see it, from the jobs' table: no job
 * with a message on its way (claimed after its last run started) and none being retried.
 */
import type { TestHarness } from "wrangler";

const PENDING = `SELECT COUNT(*) AS n FROM jobs WHERE due_at > COALESCE(ran_at, 0) OR (error IS NOT NULL AND dead_at IS NULL)`;

/** Waits until every job has run (up to `timeoutMs`). */
export async function jobsDone(db: D1Database, timeoutMs = 90_000): Promise<void> {
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
