-- Kept counts of the lists whose totals every page answers: the
-- contributors, the contributions and the incidents
-- (postgres/0027_row_counts.sql says why).
-- A SQLite trigger fires for the rows an INSERT actually inserts, not for
-- those ON CONFLICT DO NOTHING skips. SQLite has one writer: nothing is
-- inserted between the count and the trigger.
-- One shard: SQLite has one writer at a time, nothing to spread.
CREATE TABLE row_counts (
    name  TEXT NOT NULL,
    shard INTEGER NOT NULL,
    n     INTEGER NOT NULL,
    PRIMARY KEY (name, shard)
);
INSERT INTO row_counts (name, shard, n) SELECT 'contributors', 0, COUNT(*) FROM contributors;
INSERT INTO row_counts (name, shard, n) SELECT 'incidents', 0, COUNT(*) FROM incidents;
INSERT INTO row_counts (name, shard, n) SELECT 'contributions', 0, COUNT(*) FROM contributions;

CREATE TRIGGER contributors_counted AFTER INSERT ON contributors
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'contributors' AND shard = 0;
END;
CREATE TRIGGER incidents_counted AFTER INSERT ON incidents
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'incidents' AND shard = 0;
END;
CREATE TRIGGER contributions_counted AFTER INSERT ON contributions
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'contributions' AND shard = 0;
END;
