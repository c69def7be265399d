-- The credential that claimed a task (an API token's id, "admin"): only
-- it, or an operator, reports on the task afterwards, whatever worker_id
-- a request names. NULL while the task is unclaimed.
ALTER TABLE tasks ADD COLUMN claimed_by TEXT;
