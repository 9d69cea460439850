/** The admin's sessions, audit trail, counted refusals and cooldowns in D1 (migrations/0010_admin_state.sql, 0020_admin_state_hardening.sql). */
import {
  AUDIT_KEPT,
  type AdminStateStore,
  type AuditEntry,
  REFUSALS_KEPT,
  type RefusalCount,
  type RefusalReason,
  type StoredSession,
  boundedEntry,
  refusalRow,
} from "../../admin-state/store.ts";

interface SessionRow {
  origin: string;
  identity: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** Expired sessions are dropped at most this many at a time (on sign-in and sign-out). */
const PRUNE_BATCH = 100;

export class D1AdminStateStore implements AdminStateStore {
  readonly kind = "d1" as const;
  readonly #db: D1Database;

  constructor(db: D1Database) {
    this.#db = db;
  }

  async createSession(key: string, s: StoredSession): Promise<void> {
    await this.#db.batch([
      this.#prune(s.createdAt),
      this.#db
        .prepare("INSERT INTO admin_sessions (id_hash, origin, identity, created_at, expires_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .bind(key, s.origin, s.identity, s.createdAt, s.expiresAt, s.revokedAt),
    ]);
  }

  async session(origin: string, key: string): Promise<StoredSession | null> {
    const r = await this.#db.prepare("SELECT * FROM admin_sessions WHERE id_hash = ?1 AND origin = ?2").bind(key, origin).first<SessionRow>();
    return r ? { origin: r.origin, identity: r.identity, createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at } : null;
  }

  async revokeSession(origin: string, key: string, now: number): Promise<void> {
    await this.#db.batch([
      this.#db.prepare("UPDATE admin_sessions SET revoked_at = ?3 WHERE id_hash = ?1 AND origin = ?2 AND revoked_at IS NULL").bind(key, origin, now),
      this.#prune(now),
    ]);
  }

  async recordAudit(origin: string, entry: AuditEntry): Promise<void> {
    const e = boundedEntry(entry);
    await this.#db.batch([
      this.#db
        .prepare("INSERT INTO admin_audit (origin, at, who, method, resource, records, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        .bind(origin, e.at, e.who, e.method, e.resource, e.records, e.status),
      this.#keepNewest("admin_audit", origin, AUDIT_KEPT),
    ]);
  }

  async audit(origin: string, limit: number): Promise<AuditEntry[]> {
    const { results } = await this.#db
      .prepare("SELECT at, who, method, resource, records, status FROM admin_audit WHERE origin = ?1 ORDER BY id DESC LIMIT ?2")
      .bind(origin, limit)
      .all<AuditEntry>();
    return results;
  }

  async recordRefusal(origin: string, refusal: { at: number; reason: RefusalReason; who: string }): Promise<void> {
    const r = refusalRow(refusal);
    await this.#db.batch([
      this.#db
        .prepare(
          `INSERT INTO admin_refusals (origin, minute, reason, who, count) VALUES (?1, ?2, ?3, ?4, 1)
           ON CONFLICT (origin, minute, reason, who) DO UPDATE SET count = count + 1`,
        )
        .bind(origin, r.minute, r.reason, r.who),
      // Another table than the audit's: refusals only ever push out refusals.
      this.#keepNewest("admin_refusals", origin, REFUSALS_KEPT),
    ]);
  }

  async refusals(origin: string, limit: number): Promise<RefusalCount[]> {
    const { results } = await this.#db
      .prepare("SELECT minute, reason, who, count FROM admin_refusals WHERE origin = ?1 ORDER BY id DESC LIMIT ?2")
      .bind(origin, limit)
      .all<RefusalCount>();
    return results;
  }

  async claimCooldown(origin: string, action: string, now: number, until: number): Promise<number> {
    const [taken, held] = await this.#db.batch<{ ends_at: number }>([
      this.#db
        .prepare(
          `INSERT INTO admin_cooldowns (origin, action, ends_at) VALUES (?1, ?2, ?4)
           ON CONFLICT (origin, action) DO UPDATE SET ends_at = excluded.ends_at WHERE admin_cooldowns.ends_at <= ?3
           RETURNING ends_at`,
        )
        .bind(origin, action, now, until),
      this.#db.prepare("SELECT ends_at FROM admin_cooldowns WHERE origin = ?1 AND action = ?2").bind(origin, action),
    ]);
    return (taken?.results.length ?? 0) > 0 ? 0 : (held?.results[0]?.ends_at ?? 0);
  }

  /** Keeps the newest `kept` rows of the site in `table`. */
  #keepNewest(table: "admin_audit" | "admin_refusals", origin: string, kept: number): D1PreparedStatement {
    return this.#db
      .prepare(`DELETE FROM ${table} WHERE origin = ?1 AND id <= (SELECT id FROM ${table} WHERE origin = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)`)
      .bind(origin, kept);
  }

  /** Sessions that ended over a day ago are of no use to anyone. */
  #prune(now: number): D1PreparedStatement {
    return this.#db
      .prepare("DELETE FROM admin_sessions WHERE id_hash IN (SELECT id_hash FROM admin_sessions WHERE expires_at < ?1 LIMIT ?2)")
      .bind(now - 86_400_000, PRUNE_BATCH);
  }
}
