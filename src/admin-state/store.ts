/**
 * What the admin keeps about itself, per site, on the server (docs/dashboard.md "Sessions" and
 * "Audit trail"): browser sessions, so that signing out ends one for good, and the audit trail of
 * admin writes. Strongly consistent storage only (a D1 table, or the site's writer object when the
 * site has no D1 database): a revoked session must be refused on the very next request, which
 * KV's 60 s of eventual consistency could not promise.
 *
 * Sessions are keyed by the SHA-256 of their id, never the id itself: whoever reads the table
 * cannot sign in with what is in it. Audit rows hold who, when, what and the outcome, never a
 * secret or a record's body.
 */

/** A browser session as stored (src/admin/auth/session.ts makes and checks them). */
export interface StoredSession {
  /** The site it was made for: a session signs in to this origin only. */
  origin: string;
  /** Who signed in, as the audit names them (e.g. "token (session 1a2b3c4d)"). */
  identity: string;
  /** A tag of the admin token it was made under: rotating the token ends every session. */
  tokenTag: string;
  createdAt: number;
  expiresAt: number;
  /** When sign-out ended it; null while it lives. */
  revokedAt: number | null;
}

/** One admin write, as recorded. */
export interface AuditEntry {
  /** ms since the epoch */
  at: number;
  /** "token", an Access email, "service token <client id>", or a session's identity. */
  who: string;
  method: string;
  /** The path written to (no query, no body). */
  resource: string;
  /** Records the request carried, when its answer says (`received`); null otherwise. */
  records: number | null;
  /** The HTTP status answered. */
  status: number;
}

/** The audit rows kept per site (older ones are dropped as new ones come); status shows AUDIT_SHOWN. */
export const AUDIT_KEPT = 1000;
export const AUDIT_SHOWN = 100;
/** The longest resource kept: a path longer than this is cut (paths are ours, but a sync id is the client's). */
const MAX_RESOURCE_CHARS = 300;
const MAX_WHO_CHARS = 200;

export interface AdminStateStore {
  /** Where it lives, for status: "d1" or "durable-object". */
  readonly kind: "d1" | "durable-object";
  createSession(idHash: string, session: StoredSession): Promise<void>;
  /** The session of `origin` with that id hash, or null. */
  session(origin: string, idHash: string): Promise<StoredSession | null>;
  /** Ends the session (idempotent); expired sessions are dropped on the way. */
  revokeSession(origin: string, idHash: string, now: number): Promise<void>;
  recordAudit(origin: string, entry: AuditEntry): Promise<void>;
  /** The site's newest `limit` entries, newest first. */
  audit(origin: string, limit: number): Promise<AuditEntry[]>;
}

/** An entry cut to the stored bounds. */
export function boundedEntry(entry: AuditEntry): AuditEntry {
  return { ...entry, who: entry.who.slice(0, MAX_WHO_CHARS), resource: entry.resource.slice(0, MAX_RESOURCE_CHARS) };
}
