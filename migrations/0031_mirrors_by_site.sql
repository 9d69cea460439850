-- Mirror state keyed by the site that mirrors (issue 50): two sites naming one sitemap URL in their
-- MIRROR_SITEMAPS keep a mirror each, never one shared row (docs/mirror.md "One site"). `owner` is the
-- registered site whose settings name the URL, '' for the deployment's MIRROR_SITEMAPS. SQLite cannot
-- change a primary key, so both tables are copied. Rows from before keep owner '': the deployment's
-- mirrors go on where they were; a registered site's mirror starts a new pass (its old row is a
-- leftover its site's purge removes: src/adapters/d1/site-purge.ts).
CREATE TABLE mirrors_by_site (
  owner          TEXT    NOT NULL,
  url            TEXT    NOT NULL,
  etag           TEXT,
  last_modified  TEXT,
  sync_id        TEXT,
  pass_etag      TEXT,
  pass_last_modified TEXT,
  child          INTEGER NOT NULL DEFAULT -1,
  records_done   INTEGER NOT NULL DEFAULT 0,
  counts         TEXT    NOT NULL DEFAULT '{}',
  checked_at     INTEGER,
  ok_at          INTEGER,
  error          TEXT,
  error_at       INTEGER,
  prefix         TEXT,
  site           TEXT,
  check_child    INTEGER NOT NULL DEFAULT 0,
  verifying      INTEGER NOT NULL DEFAULT 0,
  top_read_at    INTEGER,
  children_digest TEXT,
  PRIMARY KEY (owner, url)
);
INSERT INTO mirrors_by_site (owner, url, etag, last_modified, sync_id, pass_etag, pass_last_modified, child, records_done, counts,
  checked_at, ok_at, error, error_at, prefix, site, check_child, verifying, top_read_at, children_digest)
SELECT '', url, etag, last_modified, sync_id, pass_etag, pass_last_modified, child, records_done, counts,
  checked_at, ok_at, error, error_at, prefix, site, check_child, verifying, top_read_at, children_digest FROM mirrors;
DROP TABLE mirrors;
ALTER TABLE mirrors_by_site RENAME TO mirrors;
-- The purge finds a site's mirrors, and leftovers that remembered it, by these.
CREATE INDEX mirrors_site ON mirrors (site);

CREATE TABLE mirror_children_by_site (
  owner          TEXT    NOT NULL,
  url            TEXT    NOT NULL,
  n              INTEGER NOT NULL,
  child          TEXT    NOT NULL,
  etag           TEXT,
  last_modified  TEXT,
  digest         TEXT,
  read_at        INTEGER,
  PRIMARY KEY (owner, url, n)
) WITHOUT ROWID;
INSERT INTO mirror_children_by_site (owner, url, n, child, etag, last_modified, digest, read_at)
SELECT '', url, n, child, etag, last_modified, digest, read_at FROM mirror_children;
DROP TABLE mirror_children;
ALTER TABLE mirror_children_by_site RENAME TO mirror_children;
