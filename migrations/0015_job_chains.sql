-- One chain per job and target (docs/jobs.md "One chain per job"): a job's messages belong to a
-- chain, named by a token the messages carry. A request (heartbeat, write, admin, chain link) starts
-- a chain only when none is live; otherwise it is folded into the live one (`requested_*`), which
-- runs once more when it ends. A delivery runs only with the chain's token and step and the
-- delivery lease; a duplicate, a stale message or a second heartbeat's message is a no-op.
ALTER TABLE jobs ADD COLUMN chain TEXT;                          -- the live chain's token; NULL: none
ALTER TABLE jobs ADD COLUMN chain_step INTEGER NOT NULL DEFAULT 0; -- the step its next message carries
-- The delivery running the step: its message id and attempt, until when (ms). A later attempt of the
-- same message finding itself the holder knows the earlier one was killed (no `finally` ran).
ALTER TABLE jobs ADD COLUMN lease_holder TEXT;
ALTER TABLE jobs ADD COLUMN lease_attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
-- Requests that arrived while the chain was live: when, the latest due time they asked for, a site pass.
ALTER TABLE jobs ADD COLUMN requested_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN requested_due INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN requested_full INTEGER NOT NULL DEFAULT 0;
-- Whether the running step folds a site pass in (set when it begins).
ALTER TABLE jobs ADD COLUMN step_full INTEGER NOT NULL DEFAULT 0;
-- Deliveries that died without finishing (CPU or memory limit, a restart), since the last success.
ALTER TABLE jobs ADD COLUMN killed INTEGER NOT NULL DEFAULT 0;
