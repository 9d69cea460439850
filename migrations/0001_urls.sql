-- URL records. One table for every site served by this deployment; a record belongs to the site of
-- its loc's origin. `id` is the stable key: AUTOINCREMENT never reuses a key, upserts keep it (ON
-- CONFLICT(loc)), and deletions are tombstones, so a loc keeps its key for life and new records
-- always get larger keys (which is what keeps earlier shards stable).
CREATE TABLE urls (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  origin      TEXT    NOT NULL,
  section     TEXT    NOT NULL,
  loc         TEXT    NOT NULL UNIQUE,
  lastmod     TEXT,
  changefreq  TEXT,
  priority    REAL,
  -- protocol extension data (images, videos, news, alternates) as JSON
  ext         TEXT,
  -- UTF-8 bytes of this record's rendered <url> element (longest lastmod form): lets the manifest
  -- enforce the 50 MB limit from the index alone, without reading records
  size        INTEGER NOT NULL,
  -- change stamp, ms since epoch; bumped only when content really changes (or on delete)
  updated_at  INTEGER NOT NULL,
  -- tombstone: 1 once deleted; kept until a regeneration has consumed it
  deleted     INTEGER NOT NULL DEFAULT 0
);

-- Every shard read and every manifest walk is a keyset range scan on this index; it also covers
-- the manifest walk (no table lookups for it).
CREATE INDEX urls_site_section_key ON urls (origin, section, id, updated_at, deleted, size);
-- Change detection (cron): records of a site changed since a stamp.
CREATE INDEX urls_site_changed ON urls (origin, updated_at);

-- The shard manifest: per site and section, contiguous ranges of the stable key. Rows with
-- url_count = 0 are kept (their key range may fill again) but never listed or served.
CREATE TABLE shards (
  origin      TEXT    NOT NULL,
  section     TEXT    NOT NULL,
  -- shard number in URLs (/sitemap-{section}-{n}.xml); assigned once, never renumbered
  n           INTEGER NOT NULL,
  first_key   INTEGER NOT NULL,
  last_key    INTEGER NOT NULL,
  url_count   INTEGER NOT NULL,
  byte_count  INTEGER NOT NULL,
  -- newest change stamp of any record in the range, tombstones included (index <lastmod>)
  last_change INTEGER NOT NULL,
  -- content version: changes whenever the rendered bytes would change
  version     TEXT    NOT NULL,
  PRIMARY KEY (origin, section, n)
);

-- One row per site: when its manifest was built and the version of the whole set (index ETag).
CREATE TABLE manifests (
  origin      TEXT    PRIMARY KEY,
  version     TEXT    NOT NULL,
  built_at    INTEGER NOT NULL
);
