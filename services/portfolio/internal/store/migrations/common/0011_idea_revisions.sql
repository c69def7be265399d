-- idea_revisions keeps every change of what steers an idea (idea.Steering:
-- its name, its values and whether an operator accepted them), so that
-- whoever staked on an idea can read what it said then and every change
-- since (GET /api/ideas/{id}/revisions). One row at creation and one per
-- write that changed any of these; by, handle and reason as in
-- stage_changes.
--
-- Ideas created before this migration have no history of their earlier
-- values: each gets one "migrated" row with its values as of its last
-- update, the first thing a reader can vouch for.
CREATE TABLE idea_revisions (
    id              TEXT PRIMARY KEY,
    idea_id         TEXT NOT NULL,
    name            TEXT NOT NULL,
    potential_value DOUBLE PRECISION NOT NULL,
    estimated_cost  DOUBLE PRECISION NOT NULL,
    actual_value    DOUBLE PRECISION NOT NULL,
    actual_cost     DOUBLE PRECISION NOT NULL,
    confidence      DOUBLE PRECISION NOT NULL,
    resistance_risk DOUBLE PRECISION NOT NULL,
    values_accepted BOOLEAN NOT NULL,
    at              BIGINT NOT NULL,
    actor           TEXT NOT NULL,
    actor_handle    TEXT,
    reason          TEXT NOT NULL
);
CREATE INDEX idea_revisions_idea ON idea_revisions (idea_id, at, id);

INSERT INTO idea_revisions (id, idea_id, name, potential_value, estimated_cost, actual_value, actual_cost,
    confidence, resistance_risk, values_accepted, at, actor, reason)
SELECT 'migrated:' || id, id, name, potential_value, estimated_cost, actual_value, actual_cost,
    confidence, resistance_risk, values_accepted, updated_at, '', 'migrated' FROM ideas;
