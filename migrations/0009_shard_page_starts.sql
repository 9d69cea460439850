-- The browser view's page starts of each shard (src/manifest/manifest.ts ShardEntry.pageStarts):
-- the stable key of the first live record of every 1,000, comma separated. A page of the view then
-- reads only its own key range. NULL for shards planned before this column (the view then falls
-- back to its per-version cache, docs/browser-view.md).
ALTER TABLE shards ADD COLUMN page_starts TEXT;
