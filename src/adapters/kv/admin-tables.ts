/**
 * The admin's sessions, audit trail, counted refusals and cooldowns in a site's writer object
 * (KvSiteWriter's SQLite), for a URL_SOURCE=kv deployment without a D1 database: the same rows as
 * D1's admin tables (migrations/0010_admin_state.sql, 0020_admin_state_hardening.sql), strongly
 * consistent like them. Synchronous: the object runs each call without awaiting in between.
 */
import { AUDIT_KEPT, REFUSALS_KEPT, type RefusalCount, boundedEntry, refusalRow } from "../../admin-state/store.ts";
import type { AdminAnswer, AdminCall } from "./object-protocol.ts";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS admin_sessions (id_hash TEXT PRIMARY KEY, identity TEXT NOT NULL,
     created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, revoked_at INTEGER)`,
  `CREATE TABLE IF NOT EXISTS admin_audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, who TEXT NOT NULL,
     method TEXT NOT NULL, resource TEXT NOT NULL, records INTEGER, status INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS admin_refusals (id INTEGER PRIMARY KEY AUTOINCREMENT, minute INTEGER NOT NULL, reason TEXT NOT NULL,
     who TEXT NOT NULL, count INTEGER NOT NULL, UNIQUE (minute, reason, who))`,
  "CREATE TABLE IF NOT EXISTS admin_cooldowns (action TEXT PRIMARY KEY, ends_at INTEGER NOT NULL)",
];

type AuditRow = { at: number; who: string; method: string; resource: string; records: number | null; status: number };
type RefusalRow = { minute: number; reason: string; who: string; count: number };
type SessionRow = { identity: string; created_at: number; expires_at: number; revoked_at: number | null };

/**
 * An object made before migration 0020's change keeps sessions with a tag of the admin token (a
 * column a guess of the token could be checked against): that table goes, and its sessions with it.
 */
function dropTaggedSessions(sql: SqlStorage): void {
  const tagged = sql.exec<{ name: string }>("SELECT name FROM pragma_table_info('admin_sessions') WHERE name = 'token_tag'").toArray().length > 0;
  if (tagged) sql.exec("DROP TABLE admin_sessions");
}

/** Keeps the newest `kept` rows of `table`. */
function keepNewest(sql: SqlStorage, table: "admin_audit" | "admin_refusals", kept: number): void {
  sql.exec(`DELETE FROM ${table} WHERE id <= (SELECT id FROM ${table} ORDER BY id DESC LIMIT 1 OFFSET ?)`, kept);
}

/** Runs one admin call against the object's SQLite (the object is the site's: `origin` is its own). */
export function runAdminCall(sql: SqlStorage, origin: string, call: AdminCall): AdminAnswer {
  dropTaggedSessions(sql);
  for (const statement of SCHEMA) sql.exec(statement);
  switch (call.op) {
    case "create-session": {
      const s = call.session;
      sql.exec("DELETE FROM admin_sessions WHERE expires_at < ?", s.createdAt - 86_400_000);
      sql.exec(
        "INSERT INTO admin_sessions (id_hash, identity, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?)",
        call.key,
        s.identity,
        s.createdAt,
        s.expiresAt,
        s.revokedAt,
      );
      return null;
    }
    case "session": {
      const r = sql.exec<SessionRow>("SELECT * FROM admin_sessions WHERE id_hash = ?", call.key).toArray()[0];
      return r ? { origin, identity: r.identity, createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at } : null;
    }
    case "revoke-session":
      sql.exec("UPDATE admin_sessions SET revoked_at = ? WHERE id_hash = ? AND revoked_at IS NULL", call.now, call.key);
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
      keepNewest(sql, "admin_audit", AUDIT_KEPT);
      return null;
    }
    case "audit":
      return sql.exec<AuditRow>("SELECT at, who, method, resource, records, status FROM admin_audit ORDER BY id DESC LIMIT ?", call.limit).toArray();
    case "record-refusal": {
      const r = refusalRow(call.refusal);
      sql.exec(
        "INSERT INTO admin_refusals (minute, reason, who, count) VALUES (?, ?, ?, 1) ON CONFLICT (minute, reason, who) DO UPDATE SET count = count + 1",
        r.minute,
        r.reason,
        r.who,
      );
      // Another table than the audit's: refusals only ever push out refusals.
      keepNewest(sql, "admin_refusals", REFUSALS_KEPT);
      return null;
    }
    case "refusals":
      return sql
        .exec<RefusalRow>("SELECT minute, reason, who, count FROM admin_refusals ORDER BY id DESC LIMIT ?", call.limit)
        .toArray()
        .map((r) => ({ ...r, reason: r.reason as RefusalCount["reason"] }));
    case "claim-cooldown": {
      const held = sql.exec<{ ends_at: number }>("SELECT ends_at FROM admin_cooldowns WHERE action = ?", call.action).toArray()[0];
      if (held && held.ends_at > call.now) return held.ends_at;
      sql.exec("INSERT OR REPLACE INTO admin_cooldowns (action, ends_at) VALUES (?, ?)", call.action, call.until);
      return 0;
    }
  }
}
