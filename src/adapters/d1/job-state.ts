/** The jobs' state in D1 (migrations/0011_jobs.sql, 0015_job_chains.sql): one row per job kind and target. */
import type { JobKind } from "../../jobs/messages.ts";
import {
  type Begun,
  CHAIN_LOST_MS,
  type Holder,
  type JobRecord,
  type JobRequest,
  type JobStateStore,
  type JobUsage,
  type Next,
} from "../../jobs/store.ts";

interface JobRow {
  kind: JobKind;
  origin: string;
  due_at: number;
  chain: string | null;
  lease_until: number;
  ran_at: number | null;
  outcome: string | null;
  usage: string | null;
  error: string | null;
  attempts: number;
  killed: number;
  failed_at: number | null;
  dead_at: number | null;
}

/** Jobs per requesting statement: 4 parameters each and 2 shared, within D1's 100 bound parameters. */
const REQUESTS_PER_STATEMENT = 24;

/** Errors kept at most this long (a stack or a long message is cut). */
const MAX_ERROR_CHARS = 500;

const KILLED = "killed: the delivery before this one started the step and never finished it (CPU or memory limit, or the runtime restarted)";

/**
 * Whether the row has no live chain (`now`, and `lost` = now − CHAIN_LOST_MS, are parameters):
 * none (ended, or gone to the dead-letter queue), or lost (its message long due, no delivery running).
 */
const FREE = (now: string, lost: string) => `(jobs.chain IS NULL OR (jobs.lease_until <= ${now} AND jobs.due_at <= ${lost}))`;

/**
 * The upsert of a request: a free row starts the new chain; a live one keeps its chain and, when
 * `note`, notes the request (when, the latest due time asked, a site pass) for one more step after
 * the running one, all in one statement, so no request falls between a chain's end and its own
 * claim. The heartbeat notes nothing: a live chain already does what it would ask.
 */
const upsert = (now: string, lost: string, note: boolean) => {
  const free = FREE(now, lost);
  const pick = (started: string, kept: string) => `CASE WHEN ${free} THEN ${started} ELSE ${kept} END`;
  return `ON CONFLICT (kind, origin) DO UPDATE SET
    chain = ${pick("excluded.chain", "jobs.chain")},
    due_at = ${pick("excluded.due_at", "jobs.due_at")},
    chain_step = ${pick("0", "jobs.chain_step")},
    lease_holder = ${pick("NULL", "jobs.lease_holder")},
    lease_attempt = ${pick("0", "jobs.lease_attempt")},
    lease_until = ${pick("0", "jobs.lease_until")},
    requested_at = ${pick("0", note ? now : "jobs.requested_at")},
    requested_due = ${pick("0", note ? "MAX(jobs.requested_due, excluded.due_at)" : "jobs.requested_due")},
    requested_full = ${pick("excluded.requested_full", note ? "MAX(jobs.requested_full, excluded.requested_full)" : "jobs.requested_full")}
  RETURNING kind, origin, chain`;
};

export class D1JobStateStore implements JobStateStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async request(job: JobRequest, now: number): Promise<boolean> {
    const row = await this.#db
      .prepare(`INSERT INTO jobs (kind, origin, due_at, chain, requested_full) VALUES (?3, ?4, ?5, ?6, ?7) ${upsert("?1", "?2", true)}`)
      .bind(now, now - CHAIN_LOST_MS, job.kind, job.origin, job.dueAt, job.chain, job.full ? 1 : 0)
      .first<{ chain: string }>();
    return row?.chain === job.chain;
  }

  async requestMany(requests: readonly JobRequest[], now: number): Promise<Set<string>> {
    const started = new Set<string>();
    // One request per job: a statement naming a job twice would keep one chain and answer for the other, and
    // matching its answer against either could send neither. The first asks; the others are the same job.
    const byJob = new Map<string, JobRequest>();
    for (const j of requests) if (!byJob.has(`${j.kind} ${j.origin}`)) byJob.set(`${j.kind} ${j.origin}`, j);
    const jobs = [...byJob.values()];
    for (let i = 0; i < jobs.length; i += REQUESTS_PER_STATEMENT) {
      const chunk = jobs.slice(i, i + REQUESTS_PER_STATEMENT);
      const values = chunk.map((_, j) => `(?${j * 4 + 3}, ?${j * 4 + 4}, ?${j * 4 + 5}, ?${j * 4 + 6}, 0)`).join(", ");
      // "WHERE true" keeps SQLite from reading ON CONFLICT as part of the VALUES (its upsert parsing rule).
      const { results } = await this.#db
        .prepare(`INSERT INTO jobs (kind, origin, due_at, chain, requested_full) SELECT * FROM (VALUES ${values}) WHERE true ${upsert("?1", "?2", false)}`)
        .bind(now, now - CHAIN_LOST_MS, ...chunk.flatMap((j) => [j.kind, j.origin, j.dueAt, j.chain]))
        .all<{ kind: string; origin: string; chain: string }>();
      const mine = new Map(chunk.map((j) => [`${j.kind} ${j.origin}`, j.chain]));
      for (const r of results) if (mine.get(`${r.kind} ${r.origin}`) === r.chain) started.add(`${r.kind} ${r.origin}`);
    }
    return started;
  }

  async unclaim(kind: JobKind, origin: string, chain: string): Promise<void> {
    await this.#db.prepare("UPDATE jobs SET chain = NULL, due_at = 0 WHERE kind = ?1 AND origin = ?2 AND chain = ?3").bind(kind, origin, chain).run();
  }

  async begin(kind: JobKind, origin: string, chain: string, step: number, holder: Holder, now: number, leaseMs: number): Promise<Begun | null> {
    // The holder column still naming this message means its earlier attempt began and never ended.
    const killed = "jobs.lease_holder = ?5";
    const row = await this.#db
      .prepare(
        `UPDATE jobs SET
           lease_holder = ?5, lease_attempt = ?6, lease_until = ?7 + ?8, ran_at = ?7,
           step_full = requested_full, requested_full = 0, requested_at = 0, requested_due = 0,
           killed = CASE WHEN ${killed} THEN killed + 1 ELSE killed END,
           attempts = CASE WHEN ${killed} THEN attempts + 1 ELSE attempts END,
           error = CASE WHEN ${killed} THEN ?9 ELSE error END,
           failed_at = CASE WHEN ${killed} THEN ?7 ELSE failed_at END,
           outcome = CASE WHEN ${killed} THEN 'killed' ELSE outcome END
         WHERE kind = ?1 AND origin = ?2 AND chain = ?3 AND chain_step = ?4
           AND (lease_holder IS NULL OR lease_until <= ?7 OR (${killed} AND lease_attempt < ?6))
         RETURNING step_full, CASE WHEN outcome = 'killed' AND failed_at = ?7 THEN 1 ELSE 0 END AS took_over`,
      )
      .bind(kind, origin, chain, step, holder.id, holder.attempt, now, leaseMs, KILLED)
      .first<{ step_full: number; took_over: number }>();
    return row ? { full: row.step_full === 1, tookOver: row.took_over === 1 } : null;
  }

  async advance(kind: JobKind, origin: string, chain: string, holder: Holder, step: number, dueAt: number): Promise<boolean> {
    const result = await this.#db
      .prepare(
        `UPDATE jobs SET chain_step = ?4, due_at = ?5, lease_holder = NULL, lease_attempt = 0, lease_until = 0
         WHERE kind = ?1 AND origin = ?2 AND chain = ?3 AND lease_holder = ?6 AND lease_attempt = ?7`,
      )
      .bind(kind, origin, chain, step, dueAt, holder.id, holder.attempt)
      .run();
    return result.meta.changes > 0;
  }

  async renew(kind: JobKind, origin: string, chain: string, holder: Holder, until: number): Promise<boolean> {
    const result = await this.#db
      .prepare(
        "UPDATE jobs SET lease_until = MAX(lease_until, ?6) WHERE kind = ?1 AND origin = ?2 AND chain = ?3 AND lease_holder = ?4 AND lease_attempt = ?5",
      )
      .bind(kind, origin, chain, holder.id, holder.attempt, until)
      .run();
    return result.meta.changes > 0;
  }

  async retreat(kind: JobKind, origin: string, chain: string, step: number, back: number): Promise<void> {
    await this.#db
      .prepare("UPDATE jobs SET chain_step = ?5 WHERE kind = ?1 AND origin = ?2 AND chain = ?3 AND chain_step = ?4 AND lease_holder IS NULL")
      .bind(kind, origin, chain, step, back)
      .run();
  }

  async finish(kind: JobKind, origin: string, chain: string, holder: Holder, now: number): Promise<Next> {
    // A request noted while the step ran (requested_at > 0: `begin` cleared the earlier ones) keeps the chain for one more step.
    const row = await this.#db
      .prepare(
        `UPDATE jobs SET
           chain = CASE WHEN requested_at > 0 THEN chain ELSE NULL END,
           chain_step = chain_step + 1,
           due_at = CASE WHEN requested_at > 0 THEN MAX(requested_due, ?4) ELSE due_at END,
           lease_holder = NULL, lease_attempt = 0, lease_until = 0
         WHERE kind = ?1 AND origin = ?2 AND chain = ?3 AND lease_holder = ?5 AND lease_attempt = ?6
         RETURNING chain, chain_step, due_at, requested_full`,
      )
      .bind(kind, origin, chain, now, holder.id, holder.attempt)
      .first<{ chain: string | null; chain_step: number; due_at: number; requested_full: number }>();
    return row?.chain ? { step: row.chain_step, dueAt: row.due_at, full: row.requested_full === 1 } : null;
  }

  async succeeded(kind: JobKind, origin: string, outcome: string, usage: JobUsage, startedAt: number): Promise<void> {
    await this.#db
      .prepare(
        `UPDATE jobs SET ran_at = ?3, outcome = ?4, usage = ?5, error = NULL, attempts = 0, killed = 0, failed_at = NULL, dead_at = NULL
         WHERE kind = ?1 AND origin = ?2`,
      )
      .bind(kind, origin, startedAt, outcome, JSON.stringify(usage))
      .run();
  }

  async failed(kind: JobKind, origin: string, chain: string, holder: Holder, error: string, usage: JobUsage, now: number, retryAt: number): Promise<void> {
    const mine = "chain = ?3 AND lease_holder = ?8 AND lease_attempt = ?9";
    await this.#db
      .prepare(
        `UPDATE jobs SET ran_at = ?4, outcome = 'failed', usage = ?5, error = ?6, attempts = attempts + 1, failed_at = ?4,
           due_at = CASE WHEN ${mine} THEN ?7 ELSE due_at END,
           lease_attempt = CASE WHEN ${mine} THEN 0 ELSE lease_attempt END,
           lease_until = CASE WHEN ${mine} THEN 0 ELSE lease_until END,
           lease_holder = CASE WHEN ${mine} THEN NULL ELSE lease_holder END
         WHERE kind = ?1 AND origin = ?2`,
      )
      .bind(kind, origin, chain, now, JSON.stringify(usage), error.slice(0, MAX_ERROR_CHARS), retryAt, holder.id, holder.attempt)
      .run();
  }

  async dead(kind: JobKind, origin: string, chain: string | null, now: number): Promise<void> {
    await this.#db
      .prepare(
        `INSERT INTO jobs (kind, origin, dead_at, error) VALUES (?1, ?2, ?3, 'failed on every attempt')
         ON CONFLICT (kind, origin) DO UPDATE SET dead_at = ?3,
           chain = CASE WHEN ?4 IS NULL OR jobs.chain = ?4 THEN NULL ELSE jobs.chain END,
           lease_holder = NULL, lease_attempt = 0, lease_until = 0`,
      )
      .bind(kind, origin, now, chain)
      .run();
  }

  async passAsked(kind: JobKind, origin: string, now: number): Promise<boolean> {
    const row = await this.#db
      // Only a live chain's: a lost one's pass would never run, and a request starts a new chain.
      .prepare(
        `SELECT 1 AS asked FROM jobs WHERE kind = ?1 AND origin = ?2 AND NOT ${FREE("?3", "?4")}
           AND (requested_full = 1 OR (step_full = 1 AND lease_until > ?3))`,
      )
      .bind(kind, origin, now, now - CHAIN_LOST_MS)
      .first<{ asked: number }>();
    return row !== null;
  }

  async list(targets: readonly string[]): Promise<JobRecord[]> {
    // One query for a site and any number of mirrors: the targets as one JSON parameter.
    const { results } = await this.#db
      .prepare("SELECT * FROM jobs WHERE origin IN (SELECT value FROM json_each(?1)) ORDER BY kind, origin")
      .bind(JSON.stringify(targets))
      .all<JobRow>();
    return results.map((r) => ({
      kind: r.kind,
      origin: r.origin,
      dueAt: r.due_at,
      chain: r.chain,
      leaseUntil: r.lease_until,
      ranAt: r.ran_at,
      outcome: r.outcome,
      usage: r.usage === null ? null : (JSON.parse(r.usage) as JobUsage),
      error: r.error,
      attempts: r.attempts,
      killed: r.killed,
      failedAt: r.failed_at,
      deadAt: r.dead_at,
    }));
  }
}
