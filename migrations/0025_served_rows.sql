-- Which rows a partition serves, visible to SQL (issue 49; docs/capacity.md "Partitions"). A
-- move leaves the rows it gives away in their old homes until the purge (src/partitions/purge.ts);
-- from its flip on they are hidden. `moved_in`: on such a row, the partition count of the move
-- that gave it away (its `target`), written by the move itself in the old home — the copy of its
-- page, the forward of a write, the catch-up (src/adapters/d1/row-copy.ts) — and NULL on every
-- other row. Partition counts only grow (jump hashing, src/partitions/home.ts), so a row is served
-- under a layout of `settled` partitions iff `moved_in IS NULL OR moved_in > settled`: before the
-- move's flip its old home serves it, from the flip on its new home. Writing the marker fires no
-- change-sequence trigger (migration 0023 numbers content changes only): nothing is announced.
ALTER TABLE urls ADD COLUMN moved_in INTEGER;

-- The partition count a sync's view was taken under (src/adapters/d1/sync.ts): its guard and its
-- commit see only the rows served then. NULL: a sync of one database, or one from before this
-- migration: every row.
ALTER TABLE syncs ADD COLUMN served_by INTEGER;
