-- value_score, resource_cost and cost_usd are bounded by 10^9 a task
-- (task.MaxMeasure) from this release on; earlier reports may exceed it
-- (1e308 summed to +Inf in the prompt A/B's stats). They are brought
-- within the bound, so every sum the API answers stays a finite number.
UPDATE tasks SET value_score = 1e9 WHERE value_score > 1e9;
UPDATE tasks SET resource_cost = 1e9 WHERE resource_cost > 1e9;
UPDATE tasks SET cost_usd = 1e9 WHERE cost_usd > 1e9;
UPDATE prompt_outcomes SET value_score = 1e9 WHERE value_score > 1e9;
UPDATE prompt_outcomes SET resource_cost = 1e9 WHERE resource_cost > 1e9;
-- A day's sums that overflowed (+Inf) or hold an earlier unbounded report
-- are brought to what bounded reports could sum to.
UPDATE task_daily SET value_sum = 1e12 WHERE value_sum > 1e12;
UPDATE task_daily SET cost_sum = 1e12 WHERE cost_sum > 1e12;
UPDATE task_daily SET cost_usd = 1e12 WHERE cost_usd > 1e12;
