-- Mirrors never delete what the remote lists (docs/mirror.md "A pass that spans runs").
--
-- A pass that stops mid-document remembers digests of what it already read of that document, so
-- the next run can tell whether the document changed under it before skipping that part; the
-- site a mirror writes is remembered once known; and each sitemap an index lists keeps its own
-- validators and content digest, so an unchanged index still leads to its sitemaps being checked.

-- JSON {"locs": hex, "content": hex}: SHA-256 digests of the locs, and of the whole entries, of
-- the first records_done records of the current document (null: nothing of it read yet).
ALTER TABLE mirrors ADD COLUMN prefix TEXT;
-- the one site (origin) whose records this mirror writes; records of any other are dropped
ALTER TABLE mirrors ADD COLUMN site TEXT;
-- with no pass under way: the next listed sitemap to check conditionally (checks resume over runs)
ALTER TABLE mirrors ADD COLUMN check_child INTEGER NOT NULL DEFAULT 0;
-- 1: the pass under way has read every document and checks, before its commit, that those read in
-- earlier runs did not change since (child = the document it is at)
ALTER TABLE mirrors ADD COLUMN verifying INTEGER NOT NULL DEFAULT 0;
-- when the pass under way read the mirrored document itself (the cron run's time), and a digest
-- of the sitemaps it lists (null: not an index)
ALTER TABLE mirrors ADD COLUMN top_read_at INTEGER;
ALTER TABLE mirrors ADD COLUMN children_digest TEXT;

-- Per listed sitemap, as read by the last pass: its validators (for a conditional GET) and a
-- digest of its entries (for a remote that sends no validators or changes them without cause).
-- All null: not read whole by a finished pass, so a check treats it as changed.
ALTER TABLE mirror_children ADD COLUMN etag TEXT;
ALTER TABLE mirror_children ADD COLUMN last_modified TEXT;
ALTER TABLE mirror_children ADD COLUMN digest TEXT;
-- when (the cron run's time) the pass read it whole
ALTER TABLE mirror_children ADD COLUMN read_at INTEGER;
