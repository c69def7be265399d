-- A split parent's value is carried by its children (each takes an equal
-- share), so the portfolio totals count the children's and not the
-- parent's beside them (docs/portfolio.md, right-sizing). split marks an
-- idea that was split; the parents of existing children are marked, and
-- their values taken out of the totals, which counted them twice. Values
-- are kept to six decimals (the API's amounts), so rounding them to
-- micro-units here meets no tie and gives what the store's Go code adds.
ALTER TABLE ideas ADD COLUMN split BOOLEAN NOT NULL DEFAULT FALSE;

UPDATE ideas SET split = TRUE
WHERE archived = FALSE AND id IN (SELECT parent_idea_id FROM ideas WHERE parent_idea_id IS NOT NULL);

UPDATE portfolio_totals SET
    potential_value_micros = potential_value_micros
        - COALESCE((SELECT SUM(CAST(ROUND(potential_value * 1000000) AS BIGINT)) FROM ideas WHERE split = TRUE), 0),
    actual_value_micros = actual_value_micros
        - COALESCE((SELECT SUM(CAST(ROUND(actual_value * 1000000) AS BIGINT)) FROM ideas WHERE split = TRUE), 0)
WHERE id = 1;
