-- tag_totals counts the active ideas of each tag, kept in step in the same
-- transaction as every idea write (as stage_totals is), so the tag
-- catalog (GET /api/ideas/tags) reads one row per tag instead of joining
-- every tag of every idea to the ideas and grouping them on each request
-- (issue 38). A tag without a row, or at 0, has no active idea.
CREATE TABLE tag_totals (
    tag   TEXT PRIMARY KEY,
    ideas BIGINT NOT NULL
);

INSERT INTO tag_totals (tag, ideas)
SELECT t.tag, COUNT(*) FROM idea_tags t JOIN ideas i ON i.id = t.idea_id
WHERE i.archived = FALSE GROUP BY t.tag;
