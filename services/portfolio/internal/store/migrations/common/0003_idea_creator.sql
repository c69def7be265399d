-- The contributor who created an idea: with operators, the only one who
-- may edit it. NULL for ideas an operator (or a release before roles)
-- created, which only operators edit.
ALTER TABLE ideas ADD COLUMN created_by TEXT;
