-- Stored prompts (docs/agent.md, "Prompts"): a prompt is a named
-- template of one task type, kept in every version an operator stored;
-- its name is its A/B variant's. A task records the variant and version it
-- was given and the prompt rendered from it.
CREATE TABLE prompts (
    name       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    task_type  TEXT NOT NULL,
    text       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (name, version)
);
-- The prompts of a task type (the candidates of its tasks' A/B).
CREATE INDEX prompts_type ON prompts (task_type, name, version);

ALTER TABLE tasks ADD COLUMN prompt_version INTEGER;
ALTER TABLE tasks ADD COLUMN prompt TEXT NOT NULL DEFAULT '';

-- A blocked variant's one re-probe (abtest.Probe): when it was blocked,
-- and where its probe stands ('' not made, probing, failed, passed). The
-- variants blocked before take their last update as when.
ALTER TABLE prompt_variants ADD COLUMN blocked_at BIGINT;
ALTER TABLE prompt_variants ADD COLUMN probe TEXT NOT NULL DEFAULT '';
UPDATE prompt_variants SET blocked_at = updated_at WHERE first_zeros >= 3;
