-- The admin's state, hardened (issue 43; docs/dashboard.md, src/admin-state/store.ts).

-- Sessions: a row is found by an HMAC of the session id under ADMIN_TOKEN (src/admin/auth/session.ts),
-- so rotating the token still ends every session, and the tag of the token each row held (an HMAC
-- of a fixed label, against which a guess of the token could be checked offline) goes. Sessions
-- made before this migration are ended: their rows are keyed the old way.
DELETE FROM admin_sessions;
ALTER TABLE admin_sessions DROP COLUMN token_tag;

-- Refused writes of signed-in principals, counted per minute, reason and principal, apart from the
-- audit trail so that no flood of refusals evicts an accepted write; the newest 200 rows per site.
CREATE TABLE admin_refusals (
  id       INTEGER PRIMARY KEY AUTOINCREMENT,
  origin   TEXT    NOT NULL,
  -- ms since the epoch, the start of the minute
  minute   INTEGER NOT NULL,
  -- cross-site, not-for-browsers, action-query, cooldown
  reason   TEXT    NOT NULL,
  who      TEXT    NOT NULL,
  count    INTEGER NOT NULL
);
CREATE UNIQUE INDEX admin_refusals_minute ON admin_refusals (origin, minute, reason, who);
CREATE INDEX admin_refusals_site ON admin_refusals (origin, id);

-- A dashboard action's cooldown per site: taken by one conditional upsert (the action runs at most
-- once per site per cooldown, whoever clicks).
CREATE TABLE admin_cooldowns (
  origin   TEXT    NOT NULL,
  action   TEXT    NOT NULL,
  -- ms since the epoch: the action is refused until then
  ends_at  INTEGER NOT NULL,
  PRIMARY KEY (origin, action)
) WITHOUT ROWID;
