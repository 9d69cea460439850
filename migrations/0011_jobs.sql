-- Background jobs on Cloudflare Queues (src/jobs/, docs/jobs.md): one row per job kind and site.
-- The queue holds the messages; this table holds only what the queue cannot say:
--  * `due_at`: a message for this job is on its way and is delivered at this time (ms). A write
--    that finds it still in the future sends nothing (the pending job will see the write), so a
--    burst of writes sends one message (the debounce);
--  * the last run's outcome and what it used of the invocation's budget;
--  * the last error and whether the job went to the dead-letter queue (shown in status until a run
--    of the job succeeds; the next cron heartbeat schedules it again).
CREATE TABLE jobs (
  kind          TEXT    NOT NULL,
  origin        TEXT    NOT NULL,
  due_at        INTEGER NOT NULL DEFAULT 0,
  ran_at        INTEGER,
  outcome       TEXT,
  -- JSON: {"d1Queries", "kvOperations", "queueSends", "durationMs"} of the last run
  usage         TEXT,
  error         TEXT,
  attempts      INTEGER NOT NULL DEFAULT 0,
  failed_at     INTEGER,
  dead_at       INTEGER,
  PRIMARY KEY (kind, origin)
) WITHOUT ROWID;
