-- Kept counts of each idea's tasks by status and type
-- (postgres/0016_idea_task_counts.sql says why). SQLite has one writer: no
-- task is written between the count and the triggers, and no two
-- transactions lock the rows at once.
CREATE TABLE idea_task_counts (
    idea_id   TEXT NOT NULL,
    status    TEXT NOT NULL,
    task_type TEXT NOT NULL,
    n         INTEGER NOT NULL,
    PRIMARY KEY (idea_id, status, task_type)
);
INSERT INTO idea_task_counts (idea_id, status, task_type, n)
SELECT idea_id, status, task_type, COUNT(*) FROM tasks WHERE idea_id IS NOT NULL GROUP BY idea_id, status, task_type;

CREATE TRIGGER tasks_counted_by_idea AFTER INSERT ON tasks WHEN NEW.idea_id IS NOT NULL
BEGIN
    INSERT INTO idea_task_counts (idea_id, status, task_type, n) VALUES (NEW.idea_id, NEW.status, NEW.task_type, 1)
        ON CONFLICT (idea_id, status, task_type) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tasks_recounted_by_idea AFTER UPDATE OF status ON tasks
    WHEN NEW.idea_id IS NOT NULL AND OLD.status <> NEW.status
BEGIN
    UPDATE idea_task_counts SET n = n - 1 WHERE idea_id = OLD.idea_id AND status = OLD.status AND task_type = OLD.task_type;
    INSERT INTO idea_task_counts (idea_id, status, task_type, n) VALUES (NEW.idea_id, NEW.status, NEW.task_type, 1)
        ON CONFLICT (idea_id, status, task_type) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tasks_uncounted_by_idea AFTER DELETE ON tasks WHEN OLD.idea_id IS NOT NULL
BEGIN
    UPDATE idea_task_counts SET n = n - 1 WHERE idea_id = OLD.idea_id AND status = OLD.status AND task_type = OLD.task_type;
END;
