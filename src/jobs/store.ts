/**
 * What the jobs keep in D1 beside the queue (migrations/0011_jobs.sql, 0015_job_chains.sql; adapter:
 * src/adapters/d1/job-state.ts): per job kind and target, its one live chain (docs/jobs.md "One chain
 * per job"), when its pending message is due (the debounce), the delivery running it, its last run
 * and its last failure.
 */
import type { JobKind } from "./messages.ts";

/** What one invocation used of its budget (counted at the bindings: src/jobs/meter.ts). */
export interface JobUsage {
  d1Queries: number;
  kvOperations: number;
  queueSends: number;
  /** All calls against the one shared budget of 1,000 (D1, KV, queues, Durable Objects, Cache API). */
  serviceCalls: number;
  durationMs: number;
}

export interface JobRecord {
  kind: JobKind;
  origin: string;
  /** When the chain's next message is delivered (ms). */
  dueAt: number;
  /** The live chain's token; null when none runs or waits. */
  chain: string | null;
  /** A delivery runs the chain's step until then (ms; 0 when none runs). */
  leaseUntil: number;
  /** When the last run started. */
  ranAt: number | null;
  outcome: string | null;
  usage: JobUsage | null;
  /** The last failure's error, kept until a run succeeds. */
  error: string | null;
  attempts: number;
  /** Deliveries killed without finishing since the last success. */
  killed: number;
  failedAt: number | null;
  /** Set when the job went to the dead-letter queue (retried by the next heartbeat). */
  deadAt: number | null;
}

/** A delivery: its message id and attempt (a redelivery of a message is a later attempt of the same id). */
export interface Holder {
  id: string;
  attempt: number;
}

/** A request for a job: when it is due, and whether it asks for a site pass (regenerate). */
export interface JobRequest {
  kind: JobKind;
  origin: string;
  dueAt: number;
  /** The token of the chain this request starts if none is live. */
  chain: string;
  full?: boolean;
}

/** A delivery that may run: whether its step folds in a site pass, and whether the attempt before it was killed. */
export interface Begun {
  full: boolean;
  /** The previous attempt of this message started and never finished. */
  tookOver: boolean;
}

/** How a chain's step ended: its next message (a continuation, or the rerun a request asked for), or none. */
export type Next = { step: number; dueAt: number; full: boolean } | null;

export interface JobStateStore {
  /**
   * Starts the job's chain unless one is live: true when started (the caller sends its first
   * message, carrying `chain`); false when a live chain takes the request (it runs once more after
   * its current step when the request came after that step began).
   */
  request(job: JobRequest, now: number): Promise<boolean>;
  /** `request` for many jobs in a few statements (the heartbeat): the keys (`kind origin`) started. */
  requestMany(jobs: readonly JobRequest[], now: number): Promise<Set<string>>;
  /** Gives a started chain back (its first send failed), so the next request starts it. */
  unclaim(kind: JobKind, origin: string, chain: string): Promise<void>;
  /**
   * A delivery of the chain's step `step` takes the step's lease: null when the message is stale (another chain, another
   * step, the chain ended) or a delivery holds the lease (a duplicate): the message is a no-op. The
   * next attempt of a message whose earlier attempt holds the lease takes it over, counted as killed.
   */
  begin(
    kind: JobKind,
    origin: string,
    chain: string,
    step: number,
    holder: { id: string; attempt: number },
    now: number,
    leaseMs: number,
  ): Promise<Begun | null>;
  /**
   * The step continues: the chain's next message, due at `dueAt`, gets `step`; the lease is let go.
   * Only by the delivery holding the step's lease (`holder`, its message id): false for any other (a
   * delivery that was taken over, or a chain that is no longer this one).
   */
  advance(kind: JobKind, origin: string, chain: string, holder: Holder, step: number, dueAt: number): Promise<boolean>;
  /**
   * The chain's next message (step `step`) could not be sent after `advance` or `finish` moved the
   * chain to it: the chain goes back to step `back` (no lease), so the queue's retry of that step's
   * message begins it again instead of finding it stale. Only while no delivery began `step`.
   */
  retreat(kind: JobKind, origin: string, chain: string, step: number, back: number): Promise<void>;
  /** The delivery holding the step's lease (`holder`) keeps it until `until`; false when it no longer holds it. */
  renew(kind: JobKind, origin: string, chain: string, holder: Holder, until: number): Promise<boolean>;
  /** The step ended without a continuation: the chain ends, unless a request came while it ran (then its rerun). Only by the lease's holder. */
  finish(kind: JobKind, origin: string, chain: string, holder: Holder, now: number): Promise<Next>;
  /** A run that ended without throwing: its outcome; clears the last failure. */
  succeeded(kind: JobKind, origin: string, outcome: string, usage: JobUsage, startedAt: number): Promise<void>;
  /** A run that threw: the queue retries the message; the lease is let go (by its holder), the chain stays. */
  failed(kind: JobKind, origin: string, chain: string, holder: Holder, error: string, usage: JobUsage, now: number, retryAt: number): Promise<void>;
  /** The queue gave up on it (the dead-letter queue): the chain ends, the next heartbeat starts it again. */
  dead(kind: JobKind, origin: string, chain: string | null, now: number): Promise<void>;
  /** Every job of these targets (a site and its mirrors: the status endpoint and the dashboard), in one read. */
  list(targets: readonly string[]): Promise<JobRecord[]>;
  /**
   * Whether the job's chain carries a site pass that is asked for and not begun, or whose step runs
   * now (begun as one, its lease held): a second request for one would only start it over
   * (POST /sitemap-admin/regenerate?full=1 asks for a plain run then: src/admin/regenerate.ts).
   */
  passAsked(kind: JobKind, origin: string, now: number): Promise<boolean>;
}

/**
 * A chain whose message was due this long ago, with no delivery running, is taken as lost (a
 * message dropped by a restarted local runtime, a send that failed after its claim): the next
 * request starts a new one. Longer than a step's retries (10 s apart, each moving the due time) and
 * than the queue's usual backlog; should a message wait longer, replacing its chain costs nothing
 * but its delay: the late message is then a no-op.
 */
export const CHAIN_LOST_MS = 10 * 60_000;
