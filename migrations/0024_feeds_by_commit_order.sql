-- The regeneration's and the notifications' change feeds read D1's commit order (`urls.seq`,
-- migration 0023) instead of change stamps (issue 49: a write stamped behind a feed's cursor —
-- a writer whose clock is behind, a sync's commit stamped with its call's start — was
-- acknowledged but never rendered nor announced). Their cursors become commit positions; stamps
-- stay what they were, for lastmod and display (src/adapters/d1/change-feed.ts).
--
-- An existing cursor is moved to just before the first change stamped within a minute (the
-- default settle window, REGEN_SETTLE_SECONDS; change-feed.ts STAMP_CURSOR_MARGIN_MS) before it:
-- the stamp cursor stayed a settle window behind the newest change, and what a writer stamped
-- earlier may have committed after it, so a few changes are read (rendered, announced) again and
-- none is lost. Only sites with rows here (D1 sites; a KV site's cursors stay stamps).

-- A notification target's cursor on the commit-ordered feed; NULL: a stamp cursor.
ALTER TABLE notify_targets ADD COLUMN acked_seq INTEGER;

-- Rows not changed since migration 0023 still have seq 0, before every cursor: those a cursor may
-- not have passed (stamped within the margin before the site's oldest cursor, or after it) are
-- numbered now, in stamp order, past the head. The trigger does not fire on `seq` alone.
WITH since AS (
  SELECT origin, MIN(stamp) - 60000 AS stamp FROM (
    SELECT origin, json_extract(state, '$.cursor.stamp') AS stamp FROM regen_state
    WHERE json_valid(state) AND json_type(state, '$.cursor.stamp') IN ('integer', 'real')
    UNION ALL
    SELECT origin, acked_stamp FROM notify_targets WHERE acked_stamp > 0
  ) GROUP BY origin
)
UPDATE urls SET seq = numbered.seq
FROM (
  SELECT u.id AS id, (SELECT head FROM url_sequence WHERE id = 1) + ROW_NUMBER() OVER (ORDER BY u.updated_at, u.id) AS seq
  FROM since JOIN urls AS u ON u.origin = since.origin AND u.updated_at >= since.stamp
  WHERE u.seq = 0
) AS numbered
WHERE urls.id = numbered.id;

UPDATE url_sequence SET head = MAX(head, COALESCE((SELECT MAX(top) FROM (SELECT (SELECT MAX(seq) FROM urls WHERE urls.origin = sites.origin) AS top
  FROM (SELECT origin FROM regen_state UNION SELECT origin FROM notify_targets) AS sites)), 0))
WHERE id = 1;

UPDATE regen_state SET state = json_set(
  state,
  '$.cursor.seq',
  COALESCE(
    (SELECT MIN(seq) - 1 FROM urls
     WHERE urls.origin = regen_state.origin AND urls.updated_at >= json_extract(regen_state.state, '$.cursor.stamp') - 60000 AND urls.seq > 0),
    (SELECT head FROM url_sequence WHERE id = 1)
  ),
  -- Rows handled past a stamp cursor: a commit cursor reads nothing twice, and needs none.
  '$.recent',
  json('[]')
)
WHERE json_valid(state) AND json_type(state, '$.cursor.stamp') IN ('integer', 'real')
  AND EXISTS (SELECT 1 FROM urls WHERE urls.origin = regen_state.origin);

-- A target that never succeeded (a ping's cursor at 0) stays before every change.
UPDATE notify_targets SET acked_seq = CASE WHEN acked_stamp = 0 THEN 0 ELSE COALESCE(
    (SELECT MIN(seq) - 1 FROM urls
     WHERE urls.origin = notify_targets.origin AND urls.updated_at >= notify_targets.acked_stamp - 60000 AND urls.seq > 0),
    (SELECT head FROM url_sequence WHERE id = 1)
  ) END
WHERE EXISTS (SELECT 1 FROM urls WHERE urls.origin = notify_targets.origin);
