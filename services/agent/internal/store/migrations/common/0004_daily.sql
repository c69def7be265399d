-- The reports' rollups, reshaped so a report reads a bounded number of rows
-- however dense its window is (docs/performance.md#agent):
--   task_daily           per UTC day and route (type, model, executor): the
--                        metrics' rates and usage; a window of N days reads
--                        at most N + 1 days × routes rows.
--   task_finished_hourly per hour, every route together: the pipeline
--                        status's success window; one row per hour.
--   task_durations       per UTC day, a log-bucketed histogram of finished
--                        tasks' durations (bucket b as metrics.BucketOf):
--                        the metrics' P50/P95 beyond the exact sample.
-- They replace task_hourly, whose rows (hours × routes) grew with density.
-- Day keys are the day's midnight in Unix microseconds.

CREATE TABLE task_daily (
    day           BIGINT NOT NULL,
    task_type     TEXT NOT NULL,
    model         TEXT NOT NULL,
    executor      TEXT NOT NULL,
    created       BIGINT NOT NULL DEFAULT 0,
    completed     BIGINT NOT NULL DEFAULT 0,
    failed        BIGINT NOT NULL DEFAULT 0,
    timed_out     BIGINT NOT NULL DEFAULT 0,
    duration_sum  DOUBLE PRECISION NOT NULL DEFAULT 0,
    value_sum     DOUBLE PRECISION NOT NULL DEFAULT 0,
    cost_sum      DOUBLE PRECISION NOT NULL DEFAULT 0,
    PRIMARY KEY (day, task_type, model, executor)
);

INSERT INTO task_daily (day, task_type, model, executor, created, completed, failed, timed_out,
    duration_sum, value_sum, cost_sum)
SELECT (hour / 86400000000) * 86400000000, task_type, model, executor, SUM(created), SUM(completed),
    SUM(failed), SUM(timed_out), SUM(duration_sum), SUM(value_sum), SUM(cost_sum)
FROM task_hourly
GROUP BY (hour / 86400000000) * 86400000000, task_type, model, executor;

CREATE TABLE task_finished_hourly (
    hour      BIGINT PRIMARY KEY,
    completed BIGINT NOT NULL DEFAULT 0,
    -- failed counts failed and timed-out tasks.
    failed    BIGINT NOT NULL DEFAULT 0
);

INSERT INTO task_finished_hourly (hour, completed, failed)
SELECT hour, SUM(completed), SUM(failed + timed_out)
FROM task_hourly
GROUP BY hour
HAVING SUM(completed + failed + timed_out) > 0;

CREATE TABLE task_durations (
    day    BIGINT NOT NULL,
    bucket INTEGER NOT NULL,
    n      BIGINT NOT NULL,
    PRIMARY KEY (day, bucket)
);
-- The window's read needs only these three columns: covered by an index,
-- SQLite reads the histogram from the index alone (its table lookup per row
-- doubled the metrics' time at a saturated histogram).
CREATE INDEX task_durations_cover ON task_durations (day, bucket, n);

-- The histogram of the tasks finished so far. The bucket formula is
-- metrics.BucketOf with its floor (0.001 s) and growth (1.02).
INSERT INTO task_durations (day, bucket, n)
SELECT d.day, d.bucket, COUNT(*)
FROM (
    SELECT (completed_at / 86400000000) * 86400000000 AS day,
        CASE WHEN duration_seconds <= 0.001 THEN 0
             ELSE CAST(CEIL(LN(duration_seconds / 0.001) / LN(1.02)) AS INTEGER) END AS bucket
    FROM tasks
    WHERE completed_at IS NOT NULL AND duration_seconds IS NOT NULL
) AS d
GROUP BY d.day, d.bucket;

DROP TABLE task_hourly;
