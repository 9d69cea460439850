-- What Google did with each sitemap (Search Console API `sitemaps.list`, read by the cron at most
-- every GSC_STATUS_INTERVAL per site; docs/notify.md "Search Console status").

-- The last good answer, one row per sitemap Search Console lists for the site. Replaced as a whole
-- by each successful read; a failed read leaves it as it was.
CREATE TABLE gsc_sitemaps (
  origin           TEXT    NOT NULL,
  -- the sitemap's URL as Search Console reports it
  path             TEXT    NOT NULL,
  -- times in ms since the epoch; NULL when Google reports none (e.g. never downloaded)
  last_submitted   INTEGER,
  last_downloaded  INTEGER,
  is_pending       INTEGER NOT NULL DEFAULT 0,
  is_index         INTEGER NOT NULL DEFAULT 0,
  errors           INTEGER NOT NULL DEFAULT 0,
  warnings         INTEGER NOT NULL DEFAULT 0,
  -- JSON array of {"type", "submitted"}: URLs submitted per content type
  contents         TEXT    NOT NULL DEFAULT '[]',
  PRIMARY KEY (origin, path)
) WITHOUT ROWID;

-- Per site: when it was last read, the outcome, and the backoff after failures (403, 429, 5xx).
CREATE TABLE gsc_reads (
  origin           TEXT    PRIMARY KEY,
  -- last attempt and last success (ms)
  read_at          INTEGER,
  ok_at            INTEGER,
  -- HTTP status of the last attempt; 0 = network error or timeout
  status           INTEGER,
  error            TEXT,
  failures         INTEGER NOT NULL DEFAULT 0,
  -- earliest next attempt after a failure (ms); after a success the interval decides
  next_at          INTEGER NOT NULL DEFAULT 0,
  -- sitemaps Search Console listed beyond what is stored (the rows above are capped)
  dropped          INTEGER NOT NULL DEFAULT 0
);
