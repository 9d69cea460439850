-- The rows a move gave away, by site and move (migration 0025's `moved_in`): the flip counts them
-- per shard range to take them out of the old partitions' manifest counts (src/partitions/rebalance.ts,
-- RowCopy.movedCounts), reading only them — not every row of the partition in one statement.
-- Partial: rows no move touched (nearly all) are not in it.
CREATE INDEX urls_moved ON urls (origin, moved_in, section, id, deleted) WHERE moved_in IS NOT NULL;
