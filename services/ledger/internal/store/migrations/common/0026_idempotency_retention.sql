-- Idempotency keys are kept for a retention and pruned, oldest first, a
-- batch at a time (platform/idempotency, platform/retention): every keyed
-- write added a row forever. The prune reads this index's range.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
