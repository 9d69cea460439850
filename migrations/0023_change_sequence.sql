-- A commit-ordered change feed per database (issue exactly-once, item 1; docs/capacity.md
-- "Writes during a move"). Every change to a row of `urls` — whoever writes it, in whatever
-- statement — takes the next number of this database's one counter, in the same transaction as the
-- change (a trigger: no writer can forget it). D1 runs one write transaction at a time per
-- database, so `seq` order is commit order, and a reader that saw `seq` n has seen every change
-- numbered below n: a cursor on it cannot skip a committed change. Change stamps (`updated_at`)
-- stay what they were (the regeneration's and the notifications' feed); the move reads `seq`.
--
-- `copied_seq`: on a row a move brought (copy, forward, catch-up, src/adapters/d1/row-copy.ts),
-- the `seq` of the old home's row it is a copy of, so that "newer" between copies means later in
-- the old home's commit order, not a later stamp. Any other write of the row clears it: a row
-- written in its own database is never overwritten by a copy.
ALTER TABLE urls ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE urls ADD COLUMN copied_seq INTEGER;

CREATE TABLE url_sequence (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  head INTEGER NOT NULL
);

-- Rows written before the feed existed keep 0: every change from here on is numbered past them
-- (no statement rewrites every row of a large database). A move under way when this lands reads
-- its old feeds from 0, i.e. every change since; what reached an old home alone between its
-- start and this migration is not read again (its writes' own forwards are).
INSERT INTO url_sequence (id, head) VALUES (1, 0);

CREATE INDEX urls_site_seq ON urls (origin, seq);

CREATE TRIGGER urls_seq_insert AFTER INSERT ON urls
BEGIN
  UPDATE url_sequence SET head = head + 1 WHERE id = 1;
  UPDATE urls SET seq = (SELECT head FROM url_sequence WHERE id = 1) WHERE id = NEW.id;
END;

-- Not OF seq, copied_seq: the triggers' own updates fire nothing.
CREATE TRIGGER urls_seq_update AFTER UPDATE OF origin, section, loc, lastmod, changefreq, priority, ext, size, updated_at, deleted, source ON urls
BEGIN
  UPDATE url_sequence SET head = head + 1 WHERE id = 1;
  UPDATE urls SET
    seq = (SELECT head FROM url_sequence WHERE id = 1),
    copied_seq = CASE WHEN NEW.copied_seq IS OLD.copied_seq THEN NULL ELSE NEW.copied_seq END
  WHERE id = NEW.id;
END;
