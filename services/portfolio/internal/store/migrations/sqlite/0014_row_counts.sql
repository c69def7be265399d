-- Kept counts of the rows GET /api/ideas/storage reports
-- (postgres/0014_row_counts.sql says why). SQLite has one writer: no row
-- is written between the count and the triggers.
-- One shard: SQLite has one writer at a time, nothing to spread.
CREATE TABLE row_counts (
    name  TEXT NOT NULL,
    shard INTEGER NOT NULL,
    n     INTEGER NOT NULL,
    PRIMARY KEY (name, shard)
);
INSERT INTO row_counts (name, shard, n) SELECT 'ideas', 0, COUNT(*) FROM ideas;
INSERT INTO row_counts (name, shard, n) SELECT 'idea_questions', 0, COUNT(*) FROM idea_questions;
INSERT INTO row_counts (name, shard, n) SELECT 'idea_tags', 0, COUNT(*) FROM idea_tags;
INSERT INTO row_counts (name, shard, n) SELECT 'health_snapshots', 0, COUNT(*) FROM health_snapshots;

CREATE TRIGGER ideas_inserted AFTER INSERT ON ideas
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'ideas' AND shard = 0;
END;
CREATE TRIGGER ideas_deleted AFTER DELETE ON ideas
BEGIN
    UPDATE row_counts SET n = n - 1 WHERE name = 'ideas' AND shard = 0;
END;

CREATE TRIGGER idea_questions_inserted AFTER INSERT ON idea_questions
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'idea_questions' AND shard = 0;
END;
CREATE TRIGGER idea_questions_deleted AFTER DELETE ON idea_questions
BEGIN
    UPDATE row_counts SET n = n - 1 WHERE name = 'idea_questions' AND shard = 0;
END;

CREATE TRIGGER idea_tags_inserted AFTER INSERT ON idea_tags
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'idea_tags' AND shard = 0;
END;
CREATE TRIGGER idea_tags_deleted AFTER DELETE ON idea_tags
BEGIN
    UPDATE row_counts SET n = n - 1 WHERE name = 'idea_tags' AND shard = 0;
END;

CREATE TRIGGER health_snapshots_inserted AFTER INSERT ON health_snapshots
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'health_snapshots' AND shard = 0;
END;
CREATE TRIGGER health_snapshots_deleted AFTER DELETE ON health_snapshots
BEGIN
    UPDATE row_counts SET n = n - 1 WHERE name = 'health_snapshots' AND shard = 0;
END;
