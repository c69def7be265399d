-- Usage (docs/agent.md, "Usage"): the tokens a task's run spent and what
-- it cost, as its executor reported them or as the price table estimates
-- them; NULL until reported. The daily rollup sums them by route, so the
-- metrics, the daily series and the automation usage read them without
-- scanning tasks.
ALTER TABLE tasks ADD COLUMN tokens_in BIGINT;
ALTER TABLE tasks ADD COLUMN tokens_out BIGINT;
ALTER TABLE tasks ADD COLUMN cost_usd DOUBLE PRECISION;

ALTER TABLE task_daily ADD COLUMN tokens_in BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_daily ADD COLUMN tokens_out BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_daily ADD COLUMN cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
-- usage_tasks counts the finished tasks that reported usage (the others
-- count in no average of it).
ALTER TABLE task_daily ADD COLUMN usage_tasks BIGINT NOT NULL DEFAULT 0;
