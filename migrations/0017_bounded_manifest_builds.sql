-- No request and no job walks a whole site to build a manifest (docs/capacity.md "Partitions").
--
-- A manifest published by a site's first regeneration pass before that pass reached the end of the
-- site's rows lists only the shards planned so far: requests treat it as no manifest yet (503 with
-- Retry-After, src/sitemaps.ts) until the pass has covered every row.
ALTER TABLE manifests ADD COLUMN partial INTEGER NOT NULL DEFAULT 0;
-- A move's new partition has its manifest planned across the move's steps, after the copy and
-- before the flip (src/partitions/rebalance.ts): the plan so far (JSON, src/manifest/build.ts
-- PlanProgress), read and written only by the move. Not read with the layout.
ALTER TABLE partition_layouts ADD COLUMN build TEXT;
-- Every save of a layout names the version it read and moves it on (compare-and-set,
-- src/adapters/d1/partition-layout.ts): a move step that read an older layout (paused while another
-- ran on, even to the flip) can never save it back; it stops instead.
ALTER TABLE partition_layouts ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
-- How many partitions held the site's records before the last flip: a shard link without a count
-- (an index of one partition lists none) is read under that count for a day after a flip from one.
ALTER TABLE partition_layouts ADD COLUMN flipped_from INTEGER;
