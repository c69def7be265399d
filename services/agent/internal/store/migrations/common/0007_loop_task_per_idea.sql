-- Who opened a task: 'api' (POST /api/agent/tasks) or 'pipeline_loop' (the
-- pipeline loop, for the idea it picked). NULL on tasks from before this
-- version: they are not backfilled from their context (whose "source" any
-- client may write), and an existing database that already holds two open
-- loop tasks for one idea (the race the index below closes) must still
-- migrate. The loop's own check for open tasks still sees those tasks.
ALTER TABLE tasks ADD COLUMN source TEXT;

-- At most one open task (pending, running, needs_decision: what the loop
-- counts as open) per idea among the tasks the loop opens, whatever the
-- replicas believe about who leads: a former leader that has not yet
-- noticed it lost the loop's lease cannot open a second one. Tasks created
-- through the API are not bound by it; a client may queue several tasks for
-- one idea.
CREATE UNIQUE INDEX tasks_loop_open_idea ON tasks (idea_id)
    WHERE source = 'pipeline_loop' AND idea_id IS NOT NULL AND status IN ('pending', 'running', 'needs_decision');
