-- Which database this is (src/partitions/identity.ts). A D1 binding tells the Worker nothing about
-- which database it is, so each database carries an identity of its own: a random id, made at its
-- first use by src/adapters/d1/database-identity.ts. One row.
CREATE TABLE database_identity (
  one        INTEGER PRIMARY KEY CHECK (one = 1),
  id         TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);
-- A partitioned site's databases, in partition order, by identity (docs/capacity.md "The database
-- list is checked"). Recorded at the site's first use, extended when a move starts onto an appended
-- database, never changed. Every database of the site holds the whole list: a list whose first
-- binding was swapped for another is caught too.
CREATE TABLE partition_databases (
  origin      TEXT    NOT NULL,
  position    INTEGER NOT NULL,
  database_id TEXT    NOT NULL,
  -- The binding that named it when it was recorded (messages only: a binding may be renamed).
  binding     TEXT    NOT NULL,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (origin, position)
);
