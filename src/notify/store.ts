/**
 * D1 state of the notifier (migrations/0003_notify.sql): per target and site, an acknowledged
 * cursor over the records' change stamps, the last attempt and its outcome, and the backoff.
 *
 * What is pending is never copied: it is the rows of `urls` (tombstones included) whose
 * (updated_at, id) is past the cursor. The cursor moves only after the engine acknowledged a
 * submission, so a failed or interrupted run loses nothing, and a change is sent once per
 * acknowledgement.
 */

/** A position in (urls.updated_at, urls.id) order. */
export interface Cursor {
  stamp: number;
  id: number;
}

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

interface TargetRow {
  target: string;
  origin: string;
  acked_stamp: number;
  acked_id: number;
  config: string;
  last_attempt_at: number | null;
  last_success_at: number | null;
  last_status: number | null;
  last_error: string | null;
  failures: number;
  next_attempt_at: number;
  sent_total: number;
}

const fromRow = (r: TargetRow): TargetState => ({
  target: r.target,
  origin: r.origin,
  acked: { stamp: r.acked_stamp, id: r.acked_id },
  config: r.config,
  lastAttemptAt: r.last_attempt_at,
  lastSuccessAt: r.last_success_at,
  lastStatus: r.last_status,
  lastError: r.last_error,
  failures: r.failures,
  nextAttemptAt: r.next_attempt_at,
  sentTotal: r.sent_total,
});

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

/** A changed record as a notification target sees it. */
export interface ChangeRow {
  id: number;
  loc: string;
  updated_at: number;
}

/** Stored error bodies are cut to this many characters. */
const MAX_ERROR_CHARS = 1000;

export class NotifyStore {
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  /** Every target state, optionally of one site. */
  async states(origin?: string): Promise<TargetState[]> {
    const stmt =
      origin === undefined
        ? this.#db.prepare("SELECT * FROM notify_targets ORDER BY origin, target")
        : this.#db.prepare("SELECT * FROM notify_targets WHERE origin = ?1 ORDER BY target").bind(origin);
    const { results } = await stmt.all<TargetRow>();
    return results.map(fromRow);
  }

  async save(state: TargetState): Promise<void> {
    await this.#db
      .prepare(
        `INSERT INTO notify_targets (target, origin, acked_stamp, acked_id, config, last_attempt_at, last_success_at,
           last_status, last_error, failures, next_attempt_at, sent_total)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT (target, origin) DO UPDATE SET
           acked_stamp = excluded.acked_stamp, acked_id = excluded.acked_id, config = excluded.config,
           last_attempt_at = excluded.last_attempt_at, last_success_at = excluded.last_success_at,
           last_status = excluded.last_status, last_error = excluded.last_error, failures = excluded.failures,
           next_attempt_at = excluded.next_attempt_at, sent_total = excluded.sent_total`,
      )
      .bind(
        state.target,
        state.origin,
        state.acked.stamp,
        state.acked.id,
        state.config,
        state.lastAttemptAt,
        state.lastSuccessAt,
        state.lastStatus,
        state.lastError === null ? null : state.lastError.slice(0, MAX_ERROR_CHARS),
        state.failures,
        state.nextAttemptAt,
        state.sentTotal,
      )
      .run();
  }

  /**
   * Changed records of a site after `after` and not younger than `horizon`, oldest change first:
   * a range scan of the (origin, updated_at) index, which carries the id as its last column.
   */
  async changes(origin: string, after: Cursor, horizon: number, limit: number): Promise<ChangeRow[]> {
    const { results } = await this.#db
      .prepare(
        `SELECT id, loc, updated_at FROM urls
         WHERE origin = ?1 AND updated_at >= ?2 AND updated_at <= ?4 AND (updated_at > ?2 OR id > ?3)
         ORDER BY updated_at, id LIMIT ?5`,
      )
      .bind(origin, after.stamp, Math.min(after.id, CURSOR_END_OF_STAMP), horizon, limit)
      .all<ChangeRow>();
    return results;
  }

  /** The newest change of a site not younger than `horizon` (null: the site has no records). */
  async newestChange(origin: string, horizon: number): Promise<Cursor | null> {
    const row = await this.#db
      .prepare("SELECT updated_at, id FROM urls WHERE origin = ?1 AND updated_at <= ?2 ORDER BY updated_at DESC, id DESC LIMIT 1")
      .bind(origin, horizon)
      .first<{ updated_at: number; id: number }>();
    return row ? { stamp: row.updated_at, id: row.id } : null;
  }

  /** How many changed records of a site lie past a cursor (status endpoint; scans only those). */
  async pendingCount(origin: string, after: Cursor): Promise<number> {
    const row = await this.#db
      .prepare("SELECT COUNT(*) AS n FROM urls WHERE origin = ?1 AND updated_at >= ?2 AND (updated_at > ?2 OR id > ?3)")
      .bind(origin, after.stamp, Math.min(after.id, CURSOR_END_OF_STAMP))
      .first<{ n: number }>();
    return row?.n ?? 0;
  }

  /**
   * Claims the site for one run until `until` unless another run holds an unexpired lease.
   * One statement: the conditional upsert changes a row only when the lease is free.
   */
  async claim(origin: string, leaseId: string, now: number, until: number): Promise<boolean> {
    const { meta } = await this.#db
      .prepare(
        `INSERT INTO notify_leases (origin, lease_id, lease_until) VALUES (?1, ?2, ?3)
         ON CONFLICT (origin) DO UPDATE SET lease_id = excluded.lease_id, lease_until = excluded.lease_until
         WHERE notify_leases.lease_until <= ?4`,
      )
      .bind(origin, leaseId, until, now)
      .run();
    return (meta.changes ?? 0) === 1;
  }

  async release(origin: string, leaseId: string): Promise<void> {
    await this.#db.prepare("UPDATE notify_leases SET lease_until = 0 WHERE origin = ?1 AND lease_id = ?2").bind(origin, leaseId).run();
  }

  async retired(): Promise<Map<string, { status: number; retiredAt: number }>> {
    const { results } = await this.#db
      .prepare("SELECT template, status, retired_at FROM notify_retired")
      .all<{ template: string; status: number; retired_at: number }>();
    return new Map(results.map((r) => [r.template, { status: r.status, retiredAt: r.retired_at }]));
  }

  async retire(template: string, status: number, now: number): Promise<void> {
    await this.#db
      .prepare("INSERT INTO notify_retired (template, status, retired_at) VALUES (?1, ?2, ?3) ON CONFLICT (template) DO NOTHING")
      .bind(template, status, now)
      .run();
  }
}

export const cursorAfter = (a: Cursor, b: Cursor): boolean => a.stamp > b.stamp || (a.stamp === b.stamp && a.id > b.id);

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
