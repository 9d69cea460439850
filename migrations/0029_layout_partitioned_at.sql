-- When a partitioned site's records left one partition (the flip from one; docs/capacity.md "Links
-- carry the layout"). An index of one partition links its shards without a partition count, so such
-- a link is read as that index listed it for PIN_GRACE_MS after this flip — whatever moves follow
-- within the day, which `flipped_from` (the last flip's) forgets. NULL: the site never served from
-- one partition as a partitioned site, or has not left it yet.
ALTER TABLE partition_layouts ADD COLUMN partitioned_at INTEGER;
UPDATE partition_layouts SET partitioned_at = flipped_at WHERE flipped_from = 1;
