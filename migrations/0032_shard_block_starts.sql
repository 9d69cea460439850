-- Issue 53 ("blocks"): where each shard's deflate blocks start (ShardEntry.blockStarts,
-- src/core/block-plan.ts), planned once and kept: the live render and the stored snapshot cut the
-- same blocks, and a change re-renders only its own. Comma-separated keys; NULL: planned before them.
ALTER TABLE shards ADD COLUMN block_starts TEXT;
