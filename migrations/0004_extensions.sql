-- Protocol extensions (images, videos, news, hreflang; see docs/extensions.md). Both new columns are
-- VIRTUAL generated columns computed from the `ext` JSON, so every writer (admin API, imports,
-- `wrangler d1 execute`) keeps them right without knowing they exist; their index entries are
-- computed once, at write time.

-- Extension kinds of a record as bits (src/core/extensions/types.ts: image 1, video 2, news 4,
-- xhtml 8). The manifest walk ORs them per shard, so a shard's head declares exactly the namespaces
-- its records use before the first record is written.
ALTER TABLE urls ADD COLUMN ext_kinds INTEGER GENERATED ALWAYS AS (
  CASE WHEN ext IS NULL THEN 0 ELSE
      (CASE WHEN json_array_length(ext, '$.images') > 0 THEN 1 ELSE 0 END)
    + (CASE WHEN json_array_length(ext, '$.videos') > 0 THEN 2 ELSE 0 END)
    + (CASE WHEN json_type(ext, '$.news') = 'object' THEN 4 ELSE 0 END)
    + (CASE WHEN json_array_length(ext, '$.alternates') > 0 THEN 8 ELSE 0 END)
  END
) VIRTUAL;

-- News articles: publication time (Unix seconds) of records with news data, NULL otherwise.
-- Validation stores publication_date as YYYY-MM-DDThh:mm:ss(Z|±hh:mm), which unixepoch() reads.
ALTER TABLE urls ADD COLUMN news_at INTEGER GENERATED ALWAYS AS (unixepoch(json_extract(ext, '$.news.publication_date'))) VIRTUAL;

-- The news sitemap reads the last 2 days of one site's articles, newest first: a small range of
-- this partial index (only records with news data are in it).
CREATE INDEX urls_news ON urls (origin, news_at, deleted, updated_at) WHERE news_at IS NOT NULL;

-- The manifest walk's index: the key of urls_site_section_key plus the extension kinds. (SQLite
-- still reads a virtual column's value from the row; measured on 100,000 rows: same rows_read and
-- no slower than the old covering scan.)
CREATE INDEX urls_site_section_key_ext ON urls (origin, section, id, updated_at, deleted, size, ext_kinds);
DROP INDEX urls_site_section_key;

-- Per shard: the OR of its live records' extension kinds (namespaces the shard head declares).
ALTER TABLE shards ADD COLUMN ext_kinds INTEGER NOT NULL DEFAULT 0;
