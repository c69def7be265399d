-- The pipeline loop backs off an idea whose loop tasks keep failing
-- (docs/agent.md, "Backoff"): idea_failures counts each idea's loop
-- tasks that failed or timed out since its last completed one, with the
-- last failure's time and summary. A loop task's finish writes it in the
-- task's transaction, so the count is exact whoever finished the task
-- (the loop's executor or an external worker); a completed one removes
-- the row. One row per idea that is failing now.
CREATE TABLE idea_failures (
    idea_id        TEXT PRIMARY KEY,
    failures       INTEGER NOT NULL,
    last_failed_at BIGINT NOT NULL,
    last_error     TEXT NOT NULL
);
