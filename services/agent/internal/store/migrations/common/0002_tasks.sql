-- The agent task pipeline: tasks, the counters that keep the pipeline's
-- status and metrics fast at any number of tasks, prompt A/B outcomes, and
-- the outbox of idea advancements. Times are BIGINT Unix microseconds (UTC).

CREATE TABLE tasks (
    id               TEXT PRIMARY KEY,
    direction        TEXT NOT NULL,
    task_type        TEXT NOT NULL,
    status           TEXT NOT NULL,
    model            TEXT NOT NULL,
    executor         TEXT NOT NULL,
    tier             TEXT NOT NULL,
    command          TEXT NOT NULL,
    -- context is the JSON object given on create; idea_id and
    -- prompt_variant are extracted from it (prompt_variant may instead be
    -- the variant the service selected).
    context          TEXT NOT NULL,
    idea_id          TEXT,
    prompt_variant   TEXT,
    output           TEXT NOT NULL DEFAULT '',
    progress_pct     DOUBLE PRECISION NOT NULL DEFAULT 0,
    current_step     TEXT NOT NULL DEFAULT '',
    decision_prompt  TEXT NOT NULL DEFAULT '',
    error_summary    TEXT,
    error_category   TEXT,
    -- The claim: who runs the task, until when the claim holds without a
    -- renewal, and how many claims the task has had.
    worker_id        TEXT,
    lease_seconds    INTEGER NOT NULL DEFAULT 0,
    lease_expires_at BIGINT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    value_score      DOUBLE PRECISION,
    resource_cost    DOUBLE PRECISION,
    duration_seconds DOUBLE PRECISION,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    started_at       BIGINT,
    completed_at     BIGINT
);

-- Lists, newest first: unfiltered, by status, by type, by both.
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_status_created ON tasks (status, created_at, id);
CREATE INDEX tasks_type_created ON tasks (task_type, created_at, id);
-- Also the pending queue of one type, oldest first (claims); the pending
-- queue of several types and the oldest pending task use the status index.
CREATE INDEX tasks_status_type_created ON tasks (status, task_type, created_at, id);
-- The attention list (failed and needs_decision), newest first.
CREATE INDEX tasks_attention ON tasks (created_at, id) WHERE status IN ('failed', 'needs_decision');
-- Finished tasks by completion time: the last N finished, and the bounded
-- percentile sample of a window (duration_seconds is in the index, so the
-- sample is read from the index alone).
CREATE INDEX tasks_finished ON tasks (completed_at, id, duration_seconds) WHERE completed_at IS NOT NULL;
-- The lease reaper's expired claims.
CREATE INDEX tasks_lease ON tasks (lease_expires_at) WHERE status = 'running';
-- Open tasks of an idea (the pipeline loop leaves those ideas alone).
CREATE INDEX tasks_idea ON tasks (idea_id) WHERE idea_id IS NOT NULL;

-- task_counts holds the number of tasks by status and type, changed in the
-- transaction of every status change, so counts never scan the tasks.
CREATE TABLE task_counts (
    status    TEXT NOT NULL,
    task_type TEXT NOT NULL,
    n         BIGINT NOT NULL,
    PRIMARY KEY (status, task_type)
);

-- task_hourly is the rollup behind success rates and usage: per hour (its
-- start, Unix microseconds), task type, model and executor, the tasks
-- created and finished in that hour. Maintained on create and on finish.
CREATE TABLE task_hourly (
    hour          BIGINT NOT NULL,
    task_type     TEXT NOT NULL,
    model         TEXT NOT NULL,
    executor      TEXT NOT NULL,
    created       BIGINT NOT NULL DEFAULT 0,
    completed     BIGINT NOT NULL DEFAULT 0,
    failed        BIGINT NOT NULL DEFAULT 0,
    timed_out     BIGINT NOT NULL DEFAULT 0,
    duration_sum  DOUBLE PRECISION NOT NULL DEFAULT 0,
    value_sum     DOUBLE PRECISION NOT NULL DEFAULT 0,
    cost_sum      DOUBLE PRECISION NOT NULL DEFAULT 0,
    PRIMARY KEY (hour, task_type, model, executor)
);

-- failure_counts counts failed tasks by error category, and how many of
-- them carry an error summary (diagnostics completeness).
CREATE TABLE failure_counts (
    category  TEXT PRIMARY KEY,
    failed    BIGINT NOT NULL,
    diagnosed BIGINT NOT NULL
);

-- prompt_outcomes is the A/B measurement of each finished task that used a
-- prompt variant: one per task.
CREATE TABLE prompt_outcomes (
    task_id       TEXT PRIMARY KEY,
    variant       TEXT NOT NULL,
    value_score   DOUBLE PRECISION NOT NULL,
    resource_cost DOUBLE PRECISION NOT NULL,
    created_at    BIGINT NOT NULL
);
CREATE INDEX prompt_outcomes_variant ON prompt_outcomes (variant, created_at);

-- prompt_variants is each variant's running record (abtest.Arm), updated in
-- the transaction that records an outcome.
CREATE TABLE prompt_variants (
    variant     TEXT PRIMARY KEY,
    samples     BIGINT NOT NULL,
    sum_value   DOUBLE PRECISION NOT NULL,
    sum_cost    DOUBLE PRECISION NOT NULL,
    first_zeros INTEGER NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- idea_outbox holds the idea advancements completed tasks owe the
-- portfolio, written in the completing transaction and delivered by a
-- background loop (at least once; the portfolio is idempotent by task_id).
CREATE TABLE idea_outbox (
    task_id         TEXT PRIMARY KEY,
    idea_id         TEXT NOT NULL,
    task_type       TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    delivered_at    BIGINT,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    next_attempt_at BIGINT NOT NULL
);
CREATE INDEX idea_outbox_due ON idea_outbox (next_attempt_at) WHERE delivered_at IS NULL;
