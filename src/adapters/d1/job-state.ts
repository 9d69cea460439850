/** The jobs' state in D1 (migrations/0011_jobs.sql): one row per job kind and site. */
import type { JobKind } from "../../jobs/messages.ts";
import type { JobRecord, JobStateStore, JobUsage } from "../../jobs/store.ts";

interface JobRow {
  kind: JobKind;
  origin: string;
  due_at: number;
  ran_at: number | null;
  outcome: string | null;
  usage: string | null;
  error: string | null;
  attempts: number;
  failed_at: number | null;
  dead_at: number | null;
}

/** Jobs per claiming statement: 3 parameters each, within D1's 100 bound parameters. */
const CLAIMS_PER_STATEMENT = 30;

/** Errors kept at most this long (a stack or a long message is cut). */
const MAX_ERROR_CHARS = 500;

export class D1JobStateStore implements JobStateStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async claim(kind: JobKind, origin: string, dueAt: number, now: number): Promise<boolean> {
    // One statement: of two writers racing, exactly one finds the row free and moves it.
    const result = await this.#db
      .prepare(
        `INSERT INTO jobs (kind, origin, due_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (kind, origin) DO UPDATE SET due_at = excluded.due_at WHERE jobs.due_at <= ?4`,
      )
      .bind(kind, origin, dueAt, now)
      .run();
    return result.meta.changes > 0;
  }

  async claimMany(jobs: readonly { kind: JobKind; origin: string; dueAt: number }[], now: number): Promise<Set<string>> {
    const claimed = new Set<string>();
    for (let i = 0; i < jobs.length; i += CLAIMS_PER_STATEMENT) {
      const chunk = jobs.slice(i, i + CLAIMS_PER_STATEMENT);
      const values = chunk.map((_, j) => `(?${j * 3 + 2}, ?${j * 3 + 3}, ?${j * 3 + 4})`).join(", ");
      // "WHERE true" keeps SQLite from reading ON CONFLICT as part of the VALUES (its upsert parsing rule).
      const { results } = await this.#db
        .prepare(
          `INSERT INTO jobs (kind, origin, due_at) SELECT * FROM (VALUES ${values}) WHERE true
           ON CONFLICT (kind, origin) DO UPDATE SET due_at = excluded.due_at WHERE jobs.due_at <= ?1
           RETURNING kind, origin`,
        )
        .bind(now, ...chunk.flatMap((j) => [j.kind, j.origin, j.dueAt]))
        .all<{ kind: string; origin: string }>();
      for (const r of results) claimed.add(`${r.kind} ${r.origin}`);
    }
    return claimed;
  }

  async unclaim(kind: JobKind, origin: string, dueAt: number): Promise<void> {
    await this.#db.prepare("UPDATE jobs SET due_at = 0 WHERE kind = ?1 AND origin = ?2 AND due_at = ?3").bind(kind, origin, dueAt).run();
  }

  async succeeded(kind: JobKind, origin: string, outcome: string, usage: JobUsage, startedAt: number): Promise<void> {
    await this.#db
      .prepare(
        `INSERT INTO jobs (kind, origin, ran_at, outcome, usage) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (kind, origin) DO UPDATE SET ran_at = ?3, outcome = ?4, usage = ?5,
           error = NULL, attempts = 0, failed_at = NULL, dead_at = NULL`,
      )
      .bind(kind, origin, startedAt, outcome, JSON.stringify(usage))
      .run();
  }

  async failed(kind: JobKind, origin: string, error: string, usage: JobUsage, now: number): Promise<void> {
    await this.#db
      .prepare(
        `INSERT INTO jobs (kind, origin, ran_at, outcome, usage, error, attempts, failed_at) VALUES (?1, ?2, ?3, 'failed', ?4, ?5, 1, ?3)
         ON CONFLICT (kind, origin) DO UPDATE SET ran_at = ?3, outcome = 'failed', usage = ?4, error = ?5,
           attempts = jobs.attempts + 1, failed_at = ?3`,
      )
      .bind(kind, origin, now, JSON.stringify(usage), error.slice(0, MAX_ERROR_CHARS))
      .run();
  }

  async dead(kind: JobKind, origin: string, now: number): Promise<void> {
    await this.#db
      .prepare(
        `INSERT INTO jobs (kind, origin, dead_at, error) VALUES (?1, ?2, ?3, 'failed on every attempt')
         ON CONFLICT (kind, origin) DO UPDATE SET dead_at = ?3`,
      )
      .bind(kind, origin, now)
      .run();
  }

  async list(origin: string): Promise<JobRecord[]> {
    const { results } = await this.#db.prepare("SELECT * FROM jobs WHERE origin = ?1 ORDER BY kind").bind(origin).all<JobRow>();
    return results.map((r) => ({
      kind: r.kind,
      origin: r.origin,
      dueAt: r.due_at,
      ranAt: r.ran_at,
      outcome: r.outcome,
      usage: r.usage === null ? null : (JSON.parse(r.usage) as JobUsage),
      error: r.error,
      attempts: r.attempts,
      failedAt: r.failed_at,
      deadAt: r.dead_at,
    }));
  }
}
