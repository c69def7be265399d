-- stage_changes records every change of an idea's stage: from (NULL at
-- creation), to, when, by whom (the principal's actor: a contributor, a
-- token, "admin", or "task:<id>" for a completed task) and why (created,
-- advance, operator, update, task). GET /api/ideas/{id}/stages reads an
-- idea's changes in order from the index.
--
-- Ideas created before this migration have no history of their past
-- moves: each gets one "migrated" row at its stage as of its last update.
CREATE TABLE stage_changes (
    id         TEXT PRIMARY KEY,
    idea_id    TEXT NOT NULL,
    from_stage TEXT,
    to_stage   TEXT NOT NULL,
    at         BIGINT NOT NULL,
    actor      TEXT NOT NULL,
    reason     TEXT NOT NULL
);
CREATE INDEX stage_changes_idea ON stage_changes (idea_id, at, id);

INSERT INTO stage_changes (id, idea_id, from_stage, to_stage, at, actor, reason)
SELECT 'migrated:' || id, id, NULL, stage, updated_at, '', 'migrated' FROM ideas;
