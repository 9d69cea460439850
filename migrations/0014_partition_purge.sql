-- After a move's flip the old partitions still hold the rows they gave away, hidden (they render the
-- shards of an index read before the flip: src/partitions/pinned.ts). Once that grace is over they
-- are removed (src/partitions/purge.ts): `purge_cursor` says where the removal stands, `purged_at`
-- when it last finished (from then on nothing is hidden until the next flip).
ALTER TABLE partition_layouts ADD COLUMN purge_cursor TEXT;
ALTER TABLE partition_layouts ADD COLUMN purged_at INTEGER;
