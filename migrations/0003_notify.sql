-- Notifying search engines (IndexNow, ping endpoints, Search Console): what has been acknowledged
-- per target and site, what was last attempted, and which ping endpoints are retired.
-- See docs/notify.md.
--
-- What is pending is derived from the records themselves: the rows of a site whose change stamp
-- (urls.updated_at, id) is past the target's acknowledged cursor, tombstones included. The
-- regeneration must not purge a tombstone newer than the smallest cursor of a site
-- (notifyLowWatermark in src/notify/store.ts), or its deletion would never be announced.

-- State per notification target and site. target: 'indexnow', 'gsc', or 'ping <URL template>'.
CREATE TABLE notify_targets (
  target           TEXT    NOT NULL,
  origin           TEXT    NOT NULL,
  -- cursor: changes up to (acked_stamp, acked_id) in (urls.updated_at, urls.id) order are
  -- acknowledged (IndexNow: sent and accepted; ping and Search Console: the index was announced
  -- after them)
  acked_stamp      INTEGER NOT NULL,
  acked_id         INTEGER NOT NULL,
  -- fingerprint of the configuration the failures refer to: a changed key, endpoint or property
  -- clears the backoff
  config           TEXT    NOT NULL DEFAULT '',
  last_attempt_at  INTEGER,
  last_success_at  INTEGER,
  -- HTTP status of the last attempt; 0 = network error or timeout
  last_status      INTEGER,
  last_error       TEXT,
  -- consecutive failures, and the earliest time (ms) of the next attempt (backoff)
  failures         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  INTEGER NOT NULL DEFAULT 0,
  -- URLs (IndexNow) or announcements (ping, Search Console) acknowledged overall
  sent_total       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (target, origin)
);

-- Ping endpoints that answered 404 or 410, keyed by the configured URL template: skipped until the
-- template in PING_URLS changes (a different template is a different endpoint).
CREATE TABLE notify_retired (
  template    TEXT    PRIMARY KEY,
  status      INTEGER NOT NULL,
  retired_at  INTEGER NOT NULL
);

-- One notification run per site at a time (a cron run and a manual /__scheduled may overlap): a
-- lease with an expiry, so a run killed mid-way blocks the site for a few minutes at most.
CREATE TABLE notify_leases (
  origin       TEXT    PRIMARY KEY,
  lease_id     TEXT    NOT NULL,
  lease_until  INTEGER NOT NULL
);
