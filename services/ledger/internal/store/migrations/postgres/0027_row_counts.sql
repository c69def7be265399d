-- Kept counts of the lists whose totals every page answers: the
-- contributors, the contributions and the incidents. Each page counted its
-- whole table (COUNT(*), a walk of every row, on every poll of the
-- dashboard); a trigger now counts each row as it is inserted, in the
-- transaction that inserts it, and a page reads one row (issue 38). A
-- trigger, not the repositories, because contributors are created in four
-- places, two of them an INSERT ... ON CONFLICT DO NOTHING whose row may
-- not be new: the trigger fires for the rows actually inserted. None of
-- the three tables is ever deleted from. They are locked while they are
-- counted, so no row slips between the count and the trigger.
LOCK TABLE contributors, incidents, contributions IN SHARE MODE;

-- A count is the sum of its shards: each connection adds to the shard of
-- its backend's pid, so concurrent inserts do not queue on one row's lock
-- (with one row, eight writers of contributions at once lost a third of
-- their throughput; BenchmarkParallelContributions).
CREATE TABLE row_counts (
    name  TEXT NOT NULL,
    shard INTEGER NOT NULL,
    n     BIGINT NOT NULL,
    PRIMARY KEY (name, shard)
);
INSERT INTO row_counts (name, shard, n) SELECT 'contributors', 0, COUNT(*) FROM contributors;
INSERT INTO row_counts (name, shard, n) SELECT 'incidents', 0, COUNT(*) FROM incidents;
INSERT INTO row_counts (name, shard, n) SELECT 'contributions', 0, COUNT(*) FROM contributions;

-- search_path FROM CURRENT: the function reads the row_counts of the
-- schema it was created in, whoever's session fires it.
CREATE FUNCTION count_inserted_row() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO row_counts (name, shard, n) VALUES (TG_TABLE_NAME, pg_backend_pid() % 16, 1)
        ON CONFLICT (name, shard) DO UPDATE SET n = row_counts.n + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER contributors_counted AFTER INSERT ON contributors
    FOR EACH ROW EXECUTE FUNCTION count_inserted_row();
CREATE TRIGGER incidents_counted AFTER INSERT ON incidents
    FOR EACH ROW EXECUTE FUNCTION count_inserted_row();
CREATE TRIGGER contributions_counted AFTER INSERT ON contributions
    FOR EACH ROW EXECUTE FUNCTION count_inserted_row();
