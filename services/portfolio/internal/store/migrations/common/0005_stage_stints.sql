-- stint_us is how long the idea stayed in from_stage before this change:
-- this row's at minus the at of the idea's previous change, by (at, id).
-- GET /api/ideas/stage-times reads it, so a median over a window reads the
-- stints that ended in it and never walks an idea's history.
--
-- It is NULL when it is unknown: at the idea's creation (from_stage is
-- NULL, there was no stage to stay in) and when the previous change is a
-- "migrated" row, whose at is the idea's last update before the history
-- began, not when the idea entered its stage. Every later change writes
-- its own stint in its INSERT (sqlstore.RecordStage), by the same rule.
ALTER TABLE stage_changes ADD COLUMN stint_us BIGINT;

-- The changes recorded before this version, one statement on both
-- engines: each row's previous change is the latest of its idea's rows
-- before it by (at, id), read through stage_changes_idea.
UPDATE stage_changes SET stint_us = (
    SELECT CASE WHEN prev.reason = 'migrated' THEN NULL ELSE stage_changes.at - prev.at END
    FROM stage_changes prev
    WHERE prev.idea_id = stage_changes.idea_id
      AND (prev.at < stage_changes.at OR (prev.at = stage_changes.at AND prev.id < stage_changes.id))
    ORDER BY prev.at DESC, prev.id DESC
    LIMIT 1
)
WHERE from_stage IS NOT NULL;

-- The window of GET /api/ideas/stage-times: each stage's exits since a
-- time, one range per stage.
CREATE INDEX stage_changes_exit ON stage_changes (from_stage, at);
