-- Housekeeping (src/housekeeping/, docs/jobs.md "Housekeeping"): what only grew is trimmed by the
-- per-database sync-sweep job, in bounded steps.

-- Tombstones, found without reading a live row: the purge of a site's tombstones older than what
-- its notifiers and its regeneration have passed is a range of this index (rows read = rows
-- removed), and so is the read of its oldest one. `deleted` is in the key so that the index covers
-- both. Only tombstones are in it: a few bytes per deletion not yet purged.
CREATE INDEX urls_tombstones ON urls (origin, updated_at, deleted) WHERE deleted = 1;

-- Where each of the housekeeping's walks stands in this database, so that a run stopped by its
-- budget is resumed by the next one: `sites <first origin>` the sites of one services object
-- (the last one done), `jobs` the walk of the jobs table (the last row read, or '' between walks),
-- `unit` which partition of a partitioned site comes next.
CREATE TABLE housekeeping (
  task        TEXT    PRIMARY KEY,
  cursor      TEXT    NOT NULL,
  updated_at  INTEGER NOT NULL
) WITHOUT ROWID;

-- Per site, the regeneration cursors the housekeeping saw (JSON {"use", "next"}): a tombstone is
-- purged only below a cursor seen longer ago than a location may keep a manifest from before it.
CREATE TABLE housekeeping_sites (
  origin      TEXT    PRIMARY KEY,
  seen        TEXT    NOT NULL,
  updated_at  INTEGER NOT NULL
) WITHOUT ROWID;
