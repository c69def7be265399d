-- Kept counts of each idea's tasks by status and type, the total a list
-- of an idea's tasks answers (GET /api/agent/tasks?idea_id=): it counted
-- the idea's tasks on every page (issue 38). A trigger keeps them as tasks
-- are inserted, change status and are pruned, in the transaction that
-- writes them, whichever replica or release writes (a rolling upgrade's
-- older replicas included). The table is locked while it is counted, so
-- no task slips between the count and the triggers.
LOCK TABLE tasks IN SHARE MODE;

CREATE TABLE idea_task_counts (
    idea_id   TEXT NOT NULL,
    status    TEXT NOT NULL,
    task_type TEXT NOT NULL,
    n         BIGINT NOT NULL,
    PRIMARY KEY (idea_id, status, task_type)
);
INSERT INTO idea_task_counts (idea_id, status, task_type, n)
SELECT idea_id, status, task_type, COUNT(*) FROM tasks WHERE idea_id IS NOT NULL GROUP BY idea_id, status, task_type;

-- search_path FROM CURRENT: the function writes the idea_task_counts of
-- the schema it was created in, whoever's session fires it. A change of
-- status moves one from the old row to the new: the two rows are written
-- in the order of their status, so that concurrent changes of one idea's
-- tasks lock its rows in one order and cannot deadlock.
CREATE FUNCTION count_idea_task() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.idea_id IS NOT NULL THEN
            INSERT INTO idea_task_counts (idea_id, status, task_type, n) VALUES (NEW.idea_id, NEW.status, NEW.task_type, 1)
                ON CONFLICT (idea_id, status, task_type) DO UPDATE SET n = idea_task_counts.n + 1;
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        IF OLD.idea_id IS NOT NULL THEN
            UPDATE idea_task_counts SET n = n - 1
                WHERE idea_id = OLD.idea_id AND status = OLD.status AND task_type = OLD.task_type;
        END IF;
    ELSIF NEW.idea_id IS NOT NULL THEN
        -- A task's idea and type never change: only its status moves.
        IF OLD.status < NEW.status THEN
            UPDATE idea_task_counts SET n = n - 1
                WHERE idea_id = OLD.idea_id AND status = OLD.status AND task_type = OLD.task_type;
        END IF;
        INSERT INTO idea_task_counts (idea_id, status, task_type, n) VALUES (NEW.idea_id, NEW.status, NEW.task_type, 1)
            ON CONFLICT (idea_id, status, task_type) DO UPDATE SET n = idea_task_counts.n + 1;
        IF OLD.status > NEW.status THEN
            UPDATE idea_task_counts SET n = n - 1
                WHERE idea_id = OLD.idea_id AND status = OLD.status AND task_type = OLD.task_type;
        END IF;
    END IF;
    RETURN NULL;
END
$$;

-- The conditions keep a task without an idea (most of the API's) from
-- calling the function at all.
CREATE TRIGGER tasks_counted_by_idea AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.idea_id IS NOT NULL) EXECUTE FUNCTION count_idea_task();
CREATE TRIGGER tasks_recounted_by_idea AFTER UPDATE OF status ON tasks
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.idea_id IS NOT NULL) EXECUTE FUNCTION count_idea_task();
CREATE TRIGGER tasks_uncounted_by_idea AFTER DELETE ON tasks
    FOR EACH ROW WHEN (OLD.idea_id IS NOT NULL) EXECUTE FUNCTION count_idea_task();
