-- The pipeline loop: the lease that makes one replica its leader (see the
-- platform lease package), every pass it made, and a counter per outcome.

CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- loop_passes keeps the passes of the last LoopRetention (idle ones
-- included), so any replica reports the last pass and the history
-- survives restarts and failovers.
CREATE TABLE loop_passes (
    id           TEXT PRIMARY KEY,
    holder       TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    idea_id      TEXT NOT NULL DEFAULT '',
    idea_score   DOUBLE PRECISION NOT NULL DEFAULT 0,
    stage_before TEXT NOT NULL DEFAULT '',
    task_type    TEXT NOT NULL DEFAULT '',
    task_id      TEXT NOT NULL DEFAULT '',
    stage_after  TEXT NOT NULL DEFAULT '',
    detail       TEXT NOT NULL DEFAULT '',
    started_at   BIGINT NOT NULL,
    finished_at  BIGINT NOT NULL
);
CREATE INDEX loop_passes_finished ON loop_passes (finished_at, id);

-- loop_counts counts every pass ever made by outcome; pruning passes
-- leaves the counts whole.
CREATE TABLE loop_counts (
    outcome TEXT PRIMARY KEY,
    passes  BIGINT NOT NULL
);
