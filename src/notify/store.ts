/**
 * State of the notifier: per target and site, an acknowledged cursor in the change feed's order
 * (D1: commit order, `seq`; KV: change stamps), the last attempt and its outcome, and the backoff (kept in D1:
 * src/adapters/d1/notify-state.ts).
 *
 * What is pending is never copied: it is the store's change feed (src/store/port.ts) past the
 * cursor. The cursor moves only after the engine acknowledged a submission, so a failed or
 * interrupted run loses nothing, and a change is sent once per acknowledgement.
 */

import type { ChangeStamp } from "../store/port.ts";

/** A position in the change feed's order: `seq` on a commit-ordered feed, else (change stamp, key). */
export type Cursor = ChangeStamp;

export const CURSOR_END_OF_STAMP = Number.MAX_SAFE_INTEGER;

export interface TargetState {
  target: string;
  origin: string;
  acked: Cursor;
  config: string;
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  failures: number;
  nextAttemptAt: number;
  sentTotal: number;
}

export function newState(target: string, origin: string, acked: Cursor, config: string): TargetState {
  return {
    target,
    origin,
    acked,
    config,
    lastAttemptAt: null,
    lastSuccessAt: null,
    lastStatus: null,
    lastError: null,
    failures: 0,
    nextAttemptAt: 0,
    sentTotal: 0,
  };
}

/** Where the notifier keeps its state. */
export interface NotifyStateStore {
  /** Every target state, optionally of one site. */
  states(origin?: string): Promise<TargetState[]>;
  save(state: TargetState): Promise<void>;
  /** Claims the site for one run until `until` unless another run holds an unexpired lease. */
  claim(origin: string, leaseId: string, now: number, until: number): Promise<boolean>;
  release(origin: string, leaseId: string): Promise<void>;
  /** Ping endpoints retired (404/410), by template. */
  retired(): Promise<Map<string, { status: number; retiredAt: number }>>;
  retire(template: string, status: number, now: number): Promise<void>;
}

/** Whether `a` comes after `b` in their feed's order: commit order (`seq`) when both carry it, else (stamp, key). */
export const cursorAfter = (a: Cursor, b: Cursor): boolean =>
  a.seq !== undefined && b.seq !== undefined ? a.seq > b.seq : a.stamp > b.stamp || (a.stamp === b.stamp && a.key > b.key);

/** The state after an acknowledged attempt: cursor moved, failures and backoff cleared. */
export function succeeded(state: TargetState, now: number, status: number, acked: Cursor, sent: number): TargetState {
  return {
    ...state,
    acked,
    lastAttemptAt: now,
    lastSuccessAt: now,
    lastStatus: status,
    lastError: null,
    failures: 0,
    nextAttemptAt: 0,
    sentTotal: state.sentTotal + sent,
  };
}

/** The state after a refused or failed attempt: cursor kept, next attempt pushed back. */
export function failed(state: TargetState, now: number, status: number, error: string, nextAttemptAt: number): TargetState {
  return {
    ...state,
    lastAttemptAt: now,
    lastStatus: status,
    lastError: error,
    failures: state.failures + 1,
    nextAttemptAt,
  };
}

/**
 * Whether a target may be attempted now. A configuration different from the one the failures
 * happened under (new key, endpoint, property) clears the backoff: the fix is tried at once.
 */
export function due(state: TargetState, config: string, now: number): TargetState | null {
  if (state.config !== config) return { ...state, config, failures: 0, nextAttemptAt: 0 };
  return now >= state.nextAttemptAt ? state : null;
}
