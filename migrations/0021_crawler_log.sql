-- What verified crawlers fetched, and how many requests claimed a crawler (issue 43; docs/crawlers.md,
-- src/crawlers/log-store.ts).

-- A verified crawler's fetch of a document: at most one row per site, crawler, document, minute and
-- outcome (ok: 2xx or 304; failed: anything else). Kept CRAWLER_STALE_DAYS + 1 days (the housekeeping).
CREATE TABLE crawler_fetches (
  origin   TEXT    NOT NULL,
  crawler  TEXT    NOT NULL,
  -- index, <section>-<n>, news-<n>, feed, text-<section>-<n>, robots.txt; else the path
  document TEXT    NOT NULL,
  -- the minute of the fetch (ms since the epoch, a multiple of 60,000)
  minute   INTEGER NOT NULL,
  ok       INTEGER NOT NULL,
  -- the first fetch of that minute and outcome
  at       INTEGER NOT NULL,
  path     TEXT    NOT NULL,
  status   INTEGER NOT NULL,
  bytes    INTEGER,
  source   TEXT,
  PRIMARY KEY (origin, crawler, document, minute, ok)
) WITHOUT ROWID;
CREATE INDEX crawler_fetches_at ON crawler_fetches (origin, at);
-- The housekeeping's trim, across the database's sites.
CREATE INDEX crawler_fetches_age ON crawler_fetches (at);

-- When the log began for a site (the first status read, src/crawlers/status.ts): before
-- CRAWLER_STALE_DAYS have passed since, "not fetched in N days" would say what the log cannot know.
CREATE TABLE crawler_log_sites (
  origin     TEXT    PRIMARY KEY,
  started_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Requests claiming a crawler (verified = 1: its IP or Cloudflare said so; 0: the User-Agent alone),
-- in a ring of slots per site, crawler and verification: `h0`…`h23` an hour each, `d0`…`d7` a day each.
-- A slot is reused when its period comes round again, so the table never grows past 32 rows per
-- site, crawler and verification.
CREATE TABLE crawler_counts (
  origin   TEXT    NOT NULL,
  crawler  TEXT    NOT NULL,
  verified INTEGER NOT NULL,
  slot     TEXT    NOT NULL,
  -- hours (h slots) or days (d slots) since the epoch
  period   INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  PRIMARY KEY (origin, crawler, verified, slot)
) WITHOUT ROWID;
