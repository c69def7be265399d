-- Kept counts of the rows GET /api/ideas/storage reports: the ideas, their
-- open questions, their tags and the health snapshots. The report, public
-- and uncached, counted each whole table on every request (issue 38); a
-- trigger now adds each row inserted and takes away each row deleted, in
-- the transaction that writes it, and the report reads a few rows. A
-- trigger, not the repositories, because tags are rewritten by a delete
-- and inserts and snapshots are pruned a batch at a time: it counts the
-- rows each statement actually touched. The tables are locked while they
-- are counted, so no row slips between the count and the trigger.
LOCK TABLE ideas, idea_questions, idea_tags, health_snapshots IN SHARE MODE;

-- A count is the sum of its shards: each connection adds to the shard of
-- its backend's pid, so concurrent writers do not queue on one row's lock
-- (as the ledger's row_counts, migration 0027 there, says).
CREATE TABLE row_counts (
    name  TEXT NOT NULL,
    shard INTEGER NOT NULL,
    n     BIGINT NOT NULL,
    PRIMARY KEY (name, shard)
);
INSERT INTO row_counts (name, shard, n) SELECT 'ideas', 0, COUNT(*) FROM ideas;
INSERT INTO row_counts (name, shard, n) SELECT 'idea_questions', 0, COUNT(*) FROM idea_questions;
INSERT INTO row_counts (name, shard, n) SELECT 'idea_tags', 0, COUNT(*) FROM idea_tags;
INSERT INTO row_counts (name, shard, n) SELECT 'health_snapshots', 0, COUNT(*) FROM health_snapshots;

-- search_path FROM CURRENT: the function reads the row_counts of the
-- schema it was created in, whoever's session fires it.
CREATE FUNCTION count_written_row() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO row_counts (name, shard, n)
        VALUES (TG_TABLE_NAME, pg_backend_pid() % 16, CASE TG_OP WHEN 'DELETE' THEN -1 ELSE 1 END)
        ON CONFLICT (name, shard) DO UPDATE SET n = row_counts.n + excluded.n;
    RETURN NULL;
END
$$;

CREATE TRIGGER ideas_counted AFTER INSERT OR DELETE ON ideas
    FOR EACH ROW EXECUTE FUNCTION count_written_row();
CREATE TRIGGER idea_questions_counted AFTER INSERT OR DELETE ON idea_questions
    FOR EACH ROW EXECUTE FUNCTION count_written_row();
CREATE TRIGGER idea_tags_counted AFTER INSERT OR DELETE ON idea_tags
    FOR EACH ROW EXECUTE FUNCTION count_written_row();
CREATE TRIGGER health_snapshots_counted AFTER INSERT OR DELETE ON health_snapshots
    FOR EACH ROW EXECUTE FUNCTION count_written_row();
