-- Search Console status: a count Google gave that we could not read is unknown (NULL), never 0
-- (src/gsc/parse.ts). SQLite cannot drop a NOT NULL constraint in place, so the table is rebuilt
-- with the same rows.
CREATE TABLE gsc_sitemaps_next (
  origin           TEXT    NOT NULL,
  path             TEXT    NOT NULL,
  last_submitted   INTEGER,
  last_downloaded  INTEGER,
  is_pending       INTEGER NOT NULL DEFAULT 0,
  is_index         INTEGER NOT NULL DEFAULT 0,
  -- NULL: unknown (Google's count was missing or did not parse)
  errors           INTEGER,
  warnings         INTEGER,
  -- JSON array of {"type", "submitted"}; "submitted" null when unknown
  contents         TEXT    NOT NULL DEFAULT '[]',
  PRIMARY KEY (origin, path)
) WITHOUT ROWID;

INSERT INTO gsc_sitemaps_next (origin, path, last_submitted, last_downloaded, is_pending, is_index, errors, warnings, contents)
  SELECT origin, path, last_submitted, last_downloaded, is_pending, is_index, errors, warnings, contents FROM gsc_sitemaps;
DROP TABLE gsc_sitemaps;
ALTER TABLE gsc_sitemaps_next RENAME TO gsc_sitemaps;
