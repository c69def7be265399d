-- Retries (docs/agent.md, "Retries"): a task has max_attempts attempts,
-- taken from its type's retry policy when it is created (0 on tasks from
-- before: the configured default applies). A failed attempt with attempts
-- left keeps the task failed until next_attempt_at, when the reaper puts
-- it back in the queue; the failure of its last attempt discards it.
-- status_reason says why a task is discarded or cancelled.
ALTER TABLE tasks ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN next_attempt_at BIGINT;
ALTER TABLE tasks ADD COLUMN status_reason TEXT;

-- The failed tasks due for their retry, soonest first.
CREATE INDEX tasks_retry_due ON tasks (next_attempt_at) WHERE status = 'failed' AND next_attempt_at IS NOT NULL;

-- A failed loop task waiting for its retry is still the idea's open task:
-- the loop opens no second one beside it, so the retry finds the index
-- free when it puts the task back in the queue.
DROP INDEX tasks_loop_open_idea;
CREATE UNIQUE INDEX tasks_loop_open_idea ON tasks (idea_id)
    WHERE source = 'pipeline_loop' AND idea_id IS NOT NULL
      AND (status IN ('pending', 'running', 'needs_decision') OR (status = 'failed' AND next_attempt_at IS NOT NULL));

-- task_attempts keeps every attempt that did not complete, one row per
-- attempt: a retried task's earlier errors stay readable after its
-- fields move on to the next attempt.
CREATE TABLE task_attempts (
    task_id        TEXT NOT NULL,
    attempt        INTEGER NOT NULL,
    status         TEXT NOT NULL,
    error_summary  TEXT NOT NULL,
    error_category TEXT NOT NULL,
    worker_id      TEXT,
    started_at     BIGINT,
    finished_at    BIGINT NOT NULL,
    PRIMARY KEY (task_id, attempt)
);
