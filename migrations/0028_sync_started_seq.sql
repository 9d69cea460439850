-- "Written since the sync was opened" in commit order, not by change stamp (issue 49; docs/sync.md
-- "What a commit deletes"): the database's change-sequence head (url_sequence, migration 0023)
-- read in the same statement that opens the sync. A row whose `seq` is past it changed after the
-- open, whatever stamp its writer put on it, and is never the commit's to delete; the guard counts
-- by the same test, so its count and the commit agree. NULL: a sync opened before this migration,
-- judged by its `started_at` stamp as before.
ALTER TABLE syncs ADD COLUMN started_seq INTEGER;
