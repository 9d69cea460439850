/**
 * The admin's sessions and audit trail in a site's writer object (KvSiteWriter's SQLite), for a
 * URL_SOURCE=kv deployment without a D1 database: the same rows as D1's admin tables
 * (migrations/0010_admin_state.sql), strongly consistent like them. Synchronous: the object runs
 * each call without awaiting in between.
 */
import { AUDIT_KEPT, type AuditEntry, type StoredSession, boundedEntry } from "../../admin-state/store.ts";
import type { AdminCall } from "./object-protocol.ts";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS admin_sessions (id_hash TEXT PRIMARY KEY, identity TEXT NOT NULL, token_tag TEXT NOT NULL,
     created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, revoked_at INTEGER)`,
  `CREATE TABLE IF NOT EXISTS admin_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, who TEXT NOT NULL,
     method TEXT NOT NULL, resource TEXT NOT NULL, records INTEGER, status INTEGER NOT NULL)`,
];

type AuditRow = { at: number; who: string; method: string; resource: string; records: number | null; status: number };
type SessionRow = { identity: string; token_tag: string; created_at: number; expires_at: number; revoked_at: number | null };

/** Runs one admin call against the object's SQLite (the object is the site's: `origin` is its own). */
export function runAdminCall(sql: SqlStorage, origin: string, call: AdminCall): StoredSession | AuditEntry[] | null {
  for (const statement of SCHEMA) sql.exec(statement);
  switch (call.op) {
    case "create-session": {
      const s = call.session;
      sql.exec("DELETE FROM admin_sessions WHERE expires_at < ?", s.createdAt - 86_400_000);
      sql.exec(
        "INSERT INTO admin_sessions (id_hash, identity, token_tag, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)",
        call.idHash,
        s.identity,
        s.tokenTag,
        s.createdAt,
        s.expiresAt,
        s.revokedAt,
      );
      return null;
    }
    case "session": {
      const r = sql.exec<SessionRow>("SELECT * FROM admin_sessions WHERE id_hash = ?", call.idHash).toArray()[0];
      return r ? { origin, identity: r.identity, tokenTag: r.token_tag, createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at } : null;
    }
    case "revoke-session":
      sql.exec("UPDATE admin_sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL", call.now, call.idHash);
      return null;
    case "record-audit": {
      const e = boundedEntry(call.entry);
      sql.exec(
        "INSERT INTO admin_audit (at, who, method, resource, records, status) VALUES (?, ?, ?, ?, ?, ?)",
        e.at,
        e.who,
        e.method,
        e.resource,
        e.records,
        e.status,
      );
      sql.exec("DELETE FROM admin_audit WHERE id <= (SELECT id FROM admin_audit ORDER BY id DESC LIMIT 1 OFFSET ?)", AUDIT_KEPT);
      return null;
    }
    case "audit":
      return sql.exec<AuditRow>("SELECT at, who, method, resource, records, status FROM admin_audit ORDER BY id DESC LIMIT ?", call.limit).toArray();
  }
}
