-- Ideas and everything hung on them. Times are Unix microseconds (UTC).
CREATE TABLE ideas (
    id                     TEXT PRIMARY KEY,
    name                   TEXT NOT NULL,
    description            TEXT NOT NULL,
    potential_value        DOUBLE PRECISION NOT NULL,
    estimated_cost         DOUBLE PRECISION NOT NULL,
    actual_value           DOUBLE PRECISION NOT NULL,
    actual_cost            DOUBLE PRECISION NOT NULL,
    confidence             DOUBLE PRECISION NOT NULL,
    resistance_risk        DOUBLE PRECISION NOT NULL,
    stage                  TEXT NOT NULL,
    manifestation_status   TEXT NOT NULL,
    -- The vectors are NULL while they derive from the estimates.
    cost_compute           DOUBLE PRECISION,
    cost_infrastructure    DOUBLE PRECISION,
    cost_human_attention   DOUBLE PRECISION,
    value_adoption         DOUBLE PRECISION,
    value_lineage          DOUBLE PRECISION,
    value_friction_avoided DOUBLE PRECISION,
    -- score is stored (kept in step by every write) so ranking is an index scan.
    score                  DOUBLE PRECISION NOT NULL,
    open_question_count    INTEGER NOT NULL DEFAULT 0,
    task_count             INTEGER NOT NULL DEFAULT 0,
    parent_idea_id         TEXT REFERENCES ideas (id),
    merged_into_id         TEXT REFERENCES ideas (id),
    archived               BOOLEAN NOT NULL DEFAULT FALSE,
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL
);

-- The ranked list: active ideas by score, then id, read a page at a time.
CREATE INDEX ideas_rank ON ideas (archived, score DESC, id);
CREATE INDEX ideas_parent ON ideas (parent_idea_id);

CREATE TABLE idea_tags (
    idea_id TEXT NOT NULL REFERENCES ideas (id),
    tag     TEXT NOT NULL,
    PRIMARY KEY (idea_id, tag)
);
CREATE INDEX idea_tags_tag ON idea_tags (tag, idea_id);

CREATE TABLE idea_questions (
    id         TEXT PRIMARY KEY,
    idea_id    TEXT NOT NULL REFERENCES ideas (id),
    question   TEXT NOT NULL,
    status     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX idea_questions_idea ON idea_questions (idea_id, created_at);

-- One row per completed task reported by the agent service: a task moves
-- its idea at most once.
CREATE TABLE idea_task_events (
    task_id    TEXT PRIMARY KEY,
    idea_id    TEXT NOT NULL REFERENCES ideas (id),
    task_type  TEXT NOT NULL,
    from_stage TEXT NOT NULL,
    to_stage   TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX idea_task_events_idea ON idea_task_events (idea_id);

CREATE TABLE health_snapshots (
    id               TEXT PRIMARY KEY,
    taken_at         BIGINT NOT NULL,
    total_ideas      INTEGER NOT NULL,
    too_large        INTEGER NOT NULL,
    too_small        INTEGER NOT NULL,
    overlap          INTEGER NOT NULL,
    healthy          INTEGER NOT NULL,
    suggestion_count INTEGER NOT NULL
);
CREATE INDEX health_snapshots_taken ON health_snapshots (taken_at);

-- Portfolio totals over active ideas, kept in step in the same transaction
-- as every idea write, so the list's summary never scans the portfolio.
-- Sums are exact micro-units.
CREATE TABLE portfolio_totals (
    id                     INTEGER PRIMARY KEY CHECK (id = 1),
    total_ideas            BIGINT NOT NULL,
    validated_ideas        BIGINT NOT NULL,
    potential_value_micros BIGINT NOT NULL,
    actual_value_micros    BIGINT NOT NULL
);
INSERT INTO portfolio_totals (id, total_ideas, validated_ideas, potential_value_micros, actual_value_micros)
VALUES (1, 0, 0, 0, 0);
