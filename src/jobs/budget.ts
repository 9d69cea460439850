/**
 * How long one job step may take on work. `wrangler.jsonc` declares `limits.cpu_ms` (60,000: a
 * minute of CPU per invocation, up from the 30 s default, so that a step that stops at its budget
 * still has as much again for the unit of work in flight and the bookkeeping after it). A step
 * stops taking on work at half of it, measured in wall time (which is never less than CPU time),
 * and its chain goes on in the next invocation. test/node/deploy.test.ts keeps the two in step.
 */

/** `limits.cpu_ms` in wrangler.jsonc. */
export const CPU_MS = 60_000;

/** The share of it a step spends before it stops taking on work. */
export const STEP_BUDGET_MS = CPU_MS / 2;

/**
 * A delivery's lease on its step: another delivery of the same step may take over after this. Far
 * longer than a step (its budget plus one unit of work: a shard render, a page of 5,000 rows), and
 * short enough that a killed step's retry (10 s later, `retry_delay`) rarely waits for it: that retry
 * takes over at once, as the lease names its message.
 */
export const JOB_LEASE_MS = 3 * 60_000;

/**
 * How often a running step renews its lease (to JOB_LEASE_MS from then): a step that runs longer
 * than the lease (a request in flight at its budget, a slow store) keeps it, so a duplicate
 * delivery stays a no-op instead of running the step a second time alongside it.
 */
export const LEASE_RENEW_MS = JOB_LEASE_MS / 3;

/** `retry_delay` of the JOBS consumer in wrangler.jsonc. */
export const RETRY_DELAY_SECONDS = 10;
