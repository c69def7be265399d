-- Finished tasks are kept for a retention and pruned, oldest first, a
-- batch at a time (docs/ops.md, "Retention"): every task stayed for ever,
-- so the table grew with all the work ever done. The prune reads the
-- tasks_finished index's range.
--
-- What a completed loop task produced is handed to the later stages of
-- its idea (the loop's stage outputs), however long ago it completed: it
-- is kept here, the newest few of each idea, written with the task's
-- completion, so pruning a task never takes an idea's history from the
-- loop.
CREATE TABLE stage_outputs (
    idea_id      TEXT NOT NULL,
    completed_at BIGINT NOT NULL,
    task_id      TEXT NOT NULL,
    task_type    TEXT NOT NULL,
    output       TEXT NOT NULL,
    artifact     TEXT NOT NULL,
    PRIMARY KEY (idea_id, completed_at, task_id)
);

INSERT INTO stage_outputs (idea_id, completed_at, task_id, task_type, output, artifact)
SELECT idea_id, completed_at, id, task_type, output, COALESCE(artifact, '') FROM tasks
WHERE source = 'pipeline_loop' AND status = 'completed' AND idea_id IS NOT NULL AND completed_at IS NOT NULL;
