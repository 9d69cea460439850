-- Cron regeneration and pre-rendered snapshots (docs/regeneration.md).

-- Where a shard's / the index's pre-rendered gzip bytes are (a key of the SNAPSHOTS KV namespace,
-- content-addressed by version); NULL while none is stored (the document is rendered live).
ALTER TABLE shards ADD COLUMN snapshot TEXT;
ALTER TABLE manifests ADD COLUMN snapshot TEXT;

-- Per site: what the regeneration has consumed and what is left to do. A run reads this, works,
-- publishes the manifest (the switch), and only then writes this row: a run killed at any point
-- leaves the previous manifest served and this row pointing at work still to do.
CREATE TABLE regen_state (
  origin       TEXT    PRIMARY KEY,
  -- JSON: change-feed cursor {stamp, key, moveSeq}, changes already handled past it, work left
  -- (shards to re-render, a site pass in progress) and the render fingerprint it was done with
  state        TEXT    NOT NULL,
  -- at most one run per site: a lease with an expiry, so a killed run cannot block for long
  lease_id     TEXT,
  lease_until  INTEGER NOT NULL DEFAULT 0,
  updated_at   INTEGER NOT NULL
);

-- Structured summaries of recent runs (GET /sitemap-admin/status). Pruned to the last 100 per site.
CREATE TABLE regen_runs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  origin       TEXT    NOT NULL,
  started_at   INTEGER NOT NULL,
  ok           INTEGER NOT NULL,
  summary      TEXT    NOT NULL
);
CREATE INDEX regen_runs_site ON regen_runs (origin, id);

-- Snapshots to delete later: superseded ones (since = when they stopped being current), and ones a
-- run stored but never published (tentative = 1: the run died before its switch). Deleted once
-- older than SNAPSHOT_GRACE_SECONDS and not referenced by the current manifest.
CREATE TABLE snapshot_gc (
  key          TEXT    PRIMARY KEY,
  origin       TEXT    NOT NULL,
  since        INTEGER NOT NULL,
  tentative    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX snapshot_gc_due ON snapshot_gc (origin, since);

-- Records that changed section: the old section's shard lost a record that no tombstone marks.
-- The D1 writer (src/adapters/d1/writer.ts) writes one row per move, in the same transaction as the move; the regeneration
-- reads them in seq order (the change feed of src/adapters/d1/change-feed.ts) and re-renders that shard too.
CREATE TABLE url_moves (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  origin       TEXT    NOT NULL,
  -- the section the record left, its stable key, and the change stamp of the move
  section      TEXT    NOT NULL,
  id           INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE INDEX url_moves_site ON url_moves (origin, seq);
