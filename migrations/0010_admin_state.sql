-- The admin's own state per site (src/admin-state/store.ts, docs/dashboard.md): browser sessions,
-- checked on every request so that sign-out ends one at once, and the audit trail of admin writes.

-- One row per browser session, keyed by the SHA-256 (hex) of its id: the id itself is never stored.
CREATE TABLE admin_sessions (
  id_hash     TEXT    PRIMARY KEY,
  -- the site it signs in to, and nothing else
  origin      TEXT    NOT NULL,
  identity    TEXT    NOT NULL,
  -- a tag of the ADMIN_TOKEN it was made under (rotating the token ends every session)
  token_tag   TEXT    NOT NULL,
  -- ms since the epoch
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  -- set by sign-out; a revoked session is refused
  revoked_at  INTEGER
) WITHOUT ROWID;
CREATE INDEX admin_sessions_expiry ON admin_sessions (expires_at);

-- Every admin write: who, when, what, the outcome. Never a secret, never a record's body.
CREATE TABLE admin_audit (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  origin    TEXT    NOT NULL,
  at        INTEGER NOT NULL,
  who       TEXT    NOT NULL,
  method    TEXT    NOT NULL,
  resource  TEXT    NOT NULL,
  records   INTEGER,
  status    INTEGER NOT NULL
);
CREATE INDEX admin_audit_site ON admin_audit (origin, id);
