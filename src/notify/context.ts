/** What one notification run shares between its targets. */

import type { NotifyConfig } from "../config/notify.ts";
import type { ChangeFeed } from "../store/port.ts";
import type { Fetcher, OutcomeKind } from "./http.ts";
import type { NotifyStateStore } from "./store.ts";

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const consoleLogger: Logger = {
  info: (m) => console.log(`[notify] ${m}`),
  warn: (m) => console.warn(`[notify] ${m}`),
  error: (m) => console.error(`[notify] ${m}`),
};

export interface RunContext {
  /** Target states, leases, retired endpoints. */
  store: NotifyStateStore;
  /** The record store's change feed: what is pending past a target's cursor. */
  changes: ChangeFeed;
  config: NotifyConfig;
  fetch: Fetcher;
  /** Time of the run (ms). */
  now: number;
  /** On a stamp-ordered feed (KV), changes stamped after this are left for the next run (now − settle time); D1's ignores it. */
  horizon: number;
  /**
   * When the run stops starting requests (ms, wall clock): a job step's time budget. A request
   * under way finishes (within its timeout); what is left stays pending for the job's next step.
   */
  deadline?: number;
  log: Logger;
}

/** What happened to one target of one site in a run. */
export interface TargetReport {
  target: string;
  origin: string;
  /**
   * sent: acknowledged; idle: nothing to send; waiting: in backoff; baseline: first run, cursor
   * set; retired: endpoint gone; deferred: the step's deadline came before its request (its cursor
   * unmoved, `more` set: the job's next step sends it); otherwise the failure kind of the last attempt.
   */
  result: "sent" | "idle" | "waiting" | "baseline" | "retired" | "deferred" | Exclude<OutcomeKind, "ok">;
  /** HTTP requests made. */
  requests: number;
  /** URLs acknowledged (IndexNow) or index URLs announced (ping, Search Console). */
  acknowledged: number;
  /** HTTP status of the last answer (0 = network error or timeout). */
  status?: number;
  /** Stopped by the run's deadline with changes still pending: the job continues. */
  more?: true;
}

/** Whether the run's deadline has passed: no request starts after it (one under way finishes within its timeout). */
export const pastDeadline = (ctx: RunContext): boolean => ctx.deadline !== undefined && Date.now() >= ctx.deadline;

/** A target whose request the deadline stopped before it started: nothing sent, nothing acknowledged, more to do. */
export const deferred = (report: TargetReport): TargetReport => ({ ...report, result: "deferred", more: true });
