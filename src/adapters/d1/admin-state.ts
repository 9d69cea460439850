/** The admin's sessions and audit trail in D1 (migrations/0010_admin_state.sql). */
import { AUDIT_KEPT, type AdminStateStore, type AuditEntry, type StoredSession, boundedEntry } from "../../admin-state/store.ts";

interface SessionRow {
  origin: string;
  identity: string;
  token_tag: string;
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

  async createSession(idHash: string, s: StoredSession): Promise<void> {
    await this.#db.batch([
      this.#prune(s.createdAt),
      this.#db
        .prepare(
          "INSERT INTO admin_sessions (id_hash, origin, identity, token_tag, created_at, expires_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .bind(idHash, s.origin, s.identity, s.tokenTag, s.createdAt, s.expiresAt, s.revokedAt),
    ]);
  }

  async session(origin: string, idHash: string): Promise<StoredSession | null> {
    const r = await this.#db.prepare("SELECT * FROM admin_sessions WHERE id_hash = ?1 AND origin = ?2").bind(idHash, origin).first<SessionRow>();
    return r
      ? { origin: r.origin, identity: r.identity, tokenTag: r.token_tag, createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at }
      : null;
  }

  async revokeSession(origin: string, idHash: string, now: number): Promise<void> {
    await this.#db.batch([
      this.#db.prepare("UPDATE admin_sessions SET revoked_at = ?3 WHERE id_hash = ?1 AND origin = ?2 AND revoked_at IS NULL").bind(idHash, origin, now),
      this.#prune(now),
    ]);
  }

  async recordAudit(origin: string, entry: AuditEntry): Promise<void> {
    const e = boundedEntry(entry);
    await this.#db.batch([
      this.#db
        .prepare("INSERT INTO admin_audit (origin, at, who, method, resource, records, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        .bind(origin, e.at, e.who, e.method, e.resource, e.records, e.status),
      // Keep the newest AUDIT_KEPT rows of the site.
      this.#db
        .prepare("DELETE FROM admin_audit WHERE origin = ?1 AND id <= (SELECT id FROM admin_audit WHERE origin = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)")
        .bind(origin, AUDIT_KEPT),
    ]);
  }

  async audit(origin: string, limit: number): Promise<AuditEntry[]> {
    const { results } = await this.#db
      .prepare("SELECT at, who, method, resource, records, status FROM admin_audit WHERE origin = ?1 ORDER BY id DESC LIMIT ?2")
      .bind(origin, limit)
      .all<AuditEntry>();
    return results;
  }

  /** Sessions that ended over a day ago are of no use to anyone. */
  #prune(now: number): D1PreparedStatement {
    return this.#db
      .prepare("DELETE FROM admin_sessions WHERE id_hash IN (SELECT id_hash FROM admin_sessions WHERE expires_at < ?1 LIMIT ?2)")
      .bind(now - 86_400_000, PRUNE_BATCH);
  }
}
