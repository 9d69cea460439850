/**
 * What the admin keeps about itself, per site, on the server (docs/dashboard.md "Sessions", "Audit
 * trail" and "What a browser may do"): browser sessions, so that signing out ends one for good, the
 * audit trail of admin writes, the refusals counted apart from it, and the dashboard action's
 * cooldown. Strongly consistent storage only (a D1 table, or the site's writer object when the
 * site has no D1 database): a revoked session must be refused on the very next request, and two
 * clicks must not both find the cooldown free, which KV's 60 s of eventual consistency could not
 * promise.
 *
 * Sessions are keyed by an HMAC of their id under the admin token (src/admin/auth/session.ts),
 * never the id itself: whoever reads the table cannot sign in with what is in it, nor check a guess
 * of the token against it. Audit rows hold who, when, what and the outcome, never a secret or a
 * record's body.
 */

/** A browser session as stored (src/admin/auth/session.ts makes and checks them). */
export interface StoredSession {
  /** The site it was made for: a session signs in to this origin only. */
  origin: string;
  /** Who signed in, as the audit names them (e.g. "token (session 1a2b3c4d)"). */
  identity: string;
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

/**
 * Why the admin refused a signed-in principal's write (src/admin/auth/browser-guard.ts,
 * src/admin/auth/action-cooldown.ts): a cross-site request; a browser credential writing anything
 * but the dashboard's action (or that action without its CSRF token, or not as a navigation); the
 * action with a query; the action again within its cooldown.
 */
/**
 * Why a signed-in write was refused; `not-authorized`: its credential does not reach what it named (401, 403 or 404:
 * another site's sync, the platform API with a site's token); `rate-limited`: answered 429 (the site's writes per
 * minute, its open syncs' cap), which wrote nothing and past the limit costs the sender nothing.
 */
export type RefusalReason = "cross-site" | "not-for-browsers" | "action-query" | "cooldown" | "not-authorized" | "rate-limited";

/** Refusals of one minute, reason and principal, counted: what the trail keeps of them. */
export interface RefusalCount {
  /** The minute's start, ms since the epoch. */
  minute: number;
  reason: RefusalReason;
  who: string;
  count: number;
}

/** The audit rows kept per site (older ones are dropped as new ones come); status shows AUDIT_SHOWN. */
export const AUDIT_KEPT = 1000;
export const AUDIT_SHOWN = 100;
/**
 * Counted refusals kept per site, apart from the audit rows, so that no number of refusals evicts
 * an accepted write; a row is a minute, a reason and a principal, so a flood adds to a count.
 */
export const REFUSALS_KEPT = 200;
export const REFUSALS_SHOWN = 30;
/** The longest resource kept: a path longer than this is cut (paths are ours, but a sync id is the client's). */
const MAX_RESOURCE_CHARS = 300;
const MAX_WHO_CHARS = 200;

export interface AdminStateStore {
  /** Where it lives, for status: "d1" or "durable-object". */
  readonly kind: "d1" | "durable-object";
  createSession(key: string, session: StoredSession): Promise<void>;
  /** The session of `origin` with that key, or null. */
  session(origin: string, key: string): Promise<StoredSession | null>;
  /** Ends the session (idempotent); expired sessions are dropped on the way. */
  revokeSession(origin: string, key: string, now: number): Promise<void>;
  recordAudit(origin: string, entry: AuditEntry): Promise<void>;
  /** The site's newest `limit` entries, newest first. */
  audit(origin: string, limit: number): Promise<AuditEntry[]>;
  /** Counts a refusal in its minute's row (keeping the site's newest REFUSALS_KEPT rows). */
  recordRefusal(origin: string, refusal: { at: number; reason: RefusalReason; who: string }): Promise<void>;
  /** The site's newest `limit` refusal counts, newest first. */
  refusals(origin: string, limit: number): Promise<RefusalCount[]>;
  /**
   * Takes the site's cooldown of `action` until `until` when it is free at `now`: 0 when taken,
   * else when the earlier take that holds it ends (ms). The take is one conditional upsert, so two
   * requests never both take it.
   */
  claimCooldown(origin: string, action: string, now: number, until: number): Promise<number>;
}

/** An entry cut to the stored bounds. */
export function boundedEntry(entry: AuditEntry): AuditEntry {
  return { ...entry, who: entry.who.slice(0, MAX_WHO_CHARS), resource: entry.resource.slice(0, MAX_RESOURCE_CHARS) };
}

/** A refusal as counted: its minute, and who cut to the stored bound. */
export function refusalRow(refusal: { at: number; reason: RefusalReason; who: string }): { minute: number; reason: RefusalReason; who: string } {
  return { minute: refusal.at - (refusal.at % 60_000), reason: refusal.reason, who: refusal.who.slice(0, MAX_WHO_CHARS) };
}
