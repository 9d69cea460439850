-- One site over several D1 databases (src/partitions/, docs/capacity.md "Partitions"): how many of
-- its partitions hold its records, kept in its first database. A database appended to the site's
-- SITE_DATABASES list takes records only through a move (src/partitions/rebalance.ts): `target`
-- is then larger than `settled` until the move's flip, and `cursor` says where its copy stands.
CREATE TABLE partition_layouts (
  origin     TEXT    PRIMARY KEY,
  settled    INTEGER NOT NULL,
  target     INTEGER NOT NULL,
  flipped_at INTEGER,
  cursor     TEXT,
  updated_at INTEGER NOT NULL
);
