/**
 * What the jobs keep in D1 beside the queue (migrations/0011_jobs.sql; adapter:
 * src/adapters/d1/job-state.ts): per job kind and site, when its pending message is due (the
 * debounce), its last run and its last failure.
 */
import type { JobKind } from "./messages.ts";

/** What one invocation used of its budget (counted at the bindings: src/jobs/meter.ts). */
export interface JobUsage {
  d1Queries: number;
  kvOperations: number;
  queueSends: number;
  durationMs: number;
}

export interface JobRecord {
  kind: JobKind;
  origin: string;
  /** When the last message claimed is delivered (ms): pending while later than `ranAt`. */
  dueAt: number;
  /** When the last run started. */
  ranAt: number | null;
  outcome: string | null;
  usage: JobUsage | null;
  /** The last failure's error, kept until a run succeeds. */
  error: string | null;
  attempts: number;
  failedAt: number | null;
  /** Set when the job went to the dead-letter queue (retried by the next heartbeat). */
  deadAt: number | null;
}

export interface JobStateStore {
  /**
   * Claims the job's next delivery at `dueAt` unless one is already pending (due after `now`):
   * true when claimed (the caller sends the message), false when a pending one covers it.
   */
  claim(kind: JobKind, origin: string, dueAt: number, now: number): Promise<boolean>;
  /**
   * `claim` for many jobs in a few statements (the heartbeat: ~1 query per 30 jobs): the keys
   * (`kind origin`) claimed, whose messages the caller sends.
   */
  claimMany(jobs: readonly { kind: JobKind; origin: string; dueAt: number }[], now: number): Promise<Set<string>>;
  /** Gives a claim back (the send failed), so the next request sends. */
  unclaim(kind: JobKind, origin: string, dueAt: number): Promise<void>;
  /**
   * A run that ended without throwing: clears the last failure. `startedAt` is when it began, so a
   * message it queued meanwhile for the same job (due at or after that) still counts as pending.
   */
  succeeded(kind: JobKind, origin: string, outcome: string, usage: JobUsage, startedAt: number): Promise<void>;
  /** A run that threw (the queue retries it). */
  failed(kind: JobKind, origin: string, error: string, usage: JobUsage, now: number): Promise<void>;
  /** The queue gave up on it: it is in the dead-letter queue. */
  dead(kind: JobKind, origin: string, now: number): Promise<void>;
  /** Every job of a site (the status endpoint and the dashboard). */
  list(origin: string): Promise<JobRecord[]>;
}
