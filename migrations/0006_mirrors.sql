-- Mirrors (MIRROR_SITEMAPS, docs/mirror.md): per mirrored sitemap URL, the last good pass (its
-- HTTP validators, for conditional GETs) and the pass under way (its open sync and where it is),
-- so a mirror of any size converges over cron runs.
CREATE TABLE mirrors (
  url            TEXT    PRIMARY KEY,
  -- validators of the last committed pass: sent as If-None-Match / If-Modified-Since
  etag           TEXT,
  last_modified  TEXT,
  -- the pass under way: its sync, the validators it fetched, and its position (child -1 = the
  -- mirrored document itself; records_done = records of the current document already sent)
  sync_id        TEXT,
  pass_etag      TEXT,
  pass_last_modified TEXT,
  child          INTEGER NOT NULL DEFAULT -1,
  records_done   INTEGER NOT NULL DEFAULT 0,
  -- counts of the pass under way, then of the last finished one (JSON)
  counts         TEXT    NOT NULL DEFAULT '{}',
  checked_at     INTEGER,
  ok_at          INTEGER,
  error          TEXT,
  error_at       INTEGER
);

-- The sitemaps a mirrored sitemap index lists, for the pass under way (an index may list 50,000).
CREATE TABLE mirror_children (
  url            TEXT    NOT NULL,
  n              INTEGER NOT NULL,
  child          TEXT    NOT NULL,
  PRIMARY KEY (url, n)
) WITHOUT ROWID;
