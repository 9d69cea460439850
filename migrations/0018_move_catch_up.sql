-- Writes are accepted during a move (docs/capacity.md "Writes during a move"): each old
-- partition's change feed is read again from the move's start before the flip, and once more a
-- minute after it, so that whatever reached an old partition only (a sync's commit, a mirror's,
-- a write killed between its two databases) reaches the loc's new home too. JSON: one change
-- cursor per old partition (src/partitions/catch-up.ts); null when none is under way.
ALTER TABLE partition_layouts ADD COLUMN catch_up TEXT;
