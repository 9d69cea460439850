/**
 * The notifier's state in D1 (migrations/0003_notify.sql): target states, per-site leases and
 * retired ping endpoints. What is pending comes from the record store's change feed, not from here.
 */
import type { NotifyStateStore, TargetState } from "../../notify/store.ts";

interface TargetRow {
  target: string;
  origin: string;
  acked_stamp: number;
  acked_id: number;
  /** The cursor's commit position on a commit-ordered feed (migration 0024); null on a stamp-ordered one. */
  acked_seq: number | null;
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
  acked: r.acked_seq === null ? { stamp: r.acked_stamp, key: r.acked_id } : { stamp: r.acked_stamp, key: r.acked_id, seq: r.acked_seq },
  config: r.config,
  lastAttemptAt: r.last_attempt_at,
  lastSuccessAt: r.last_success_at,
  lastStatus: r.last_status,
  lastError: r.last_error,
  failures: r.failures,
  nextAttemptAt: r.next_attempt_at,
  sentTotal: r.sent_total,
});

/** Stored error bodies are cut to this many characters. */
const MAX_ERROR_CHARS = 1000;

export class D1NotifyStateStore implements NotifyStateStore {
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
           last_status, last_error, failures, next_attempt_at, sent_total, acked_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
         ON CONFLICT (target, origin) DO UPDATE SET
           acked_stamp = excluded.acked_stamp, acked_id = excluded.acked_id, acked_seq = excluded.acked_seq, config = excluded.config,
           last_attempt_at = excluded.last_attempt_at, last_success_at = excluded.last_success_at,
           last_status = excluded.last_status, last_error = excluded.last_error, failures = excluded.failures,
           next_attempt_at = excluded.next_attempt_at, sent_total = excluded.sent_total`,
      )
      .bind(
        state.target,
        state.origin,
        state.acked.stamp,
        state.acked.key,
        state.config,
        state.lastAttemptAt,
        state.lastSuccessAt,
        state.lastStatus,
        state.lastError === null ? null : state.lastError.slice(0, MAX_ERROR_CHARS),
        state.failures,
        state.nextAttemptAt,
        state.sentTotal,
        state.acked.seq ?? null,
      )
      .run();
  }

  /**
   * Claims the site for one run until `until` unless another run holds an unexpired lease (one of
   * the same name is this run's own: a killed step's retry takes it back).
   * One statement: the conditional upsert changes a row only when the lease is free.
   */
  async claim(origin: string, leaseId: string, now: number, until: number): Promise<boolean> {
    const { meta } = await this.#db
      .prepare(
        `INSERT INTO notify_leases (origin, lease_id, lease_until) VALUES (?1, ?2, ?3)
         ON CONFLICT (origin) DO UPDATE SET lease_id = excluded.lease_id, lease_until = excluded.lease_until
         WHERE notify_leases.lease_until <= ?4 OR notify_leases.lease_id = ?2`,
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
