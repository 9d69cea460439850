-- Full sync and mirrors (docs/sync.md): make a scope of records equal to an input, deleting (as
-- tombstones) the records of the scope the input no longer has.

-- Who brought a record in: NULL for the admin API and the import CLI, 'mirror:<url>' for a
-- mirror (MIRROR_SITEMAPS). Set when a record is created or a tombstone brought back, never
-- taken over by a later writer: a mirror's scope is what it brought in.
ALTER TABLE urls ADD COLUMN source TEXT;

-- One row per sync: its scope, its state and its counts. A sync is open while its batches
-- arrive; a commit tombstones what the scope has and the sync did not see, in bounded chunks
-- that resume from `cursor` (so an interrupted commit is retried, and is idempotent).
CREATE TABLE syncs (
  id           TEXT    PRIMARY KEY,
  -- JSON {sites: string[], section: string|null, source: string|null}
  scope        TEXT    NOT NULL,
  -- open | committing | committed | aborted
  state        TEXT    NOT NULL,
  -- the guard: the largest share (0–1) of the scope's live records a commit may delete
  max_delete   REAL    NOT NULL,
  started_at   INTEGER NOT NULL,
  -- an open sync nobody sends to or commits is abandoned: the cron sweeps it after this (ms)
  expires_at   INTEGER NOT NULL,
  -- JSON: where a commit's tombstoning has got to (NULL before the commit starts)
  cursor       TEXT,
  received     INTEGER NOT NULL DEFAULT 0,
  inserted     INTEGER NOT NULL DEFAULT 0,
  updated      INTEGER NOT NULL DEFAULT 0,
  unchanged    INTEGER NOT NULL DEFAULT 0,
  deleted      INTEGER NOT NULL DEFAULT 0,
  finished_at  INTEGER
);
CREATE INDEX syncs_expiry ON syncs (state, expires_at);

-- The records a sync has seen (urls.id), written in the same transaction as their batch.
CREATE TABLE sync_seen (
  sync         TEXT    NOT NULL,
  id           INTEGER NOT NULL,
  PRIMARY KEY (sync, id)
) WITHOUT ROWID;
