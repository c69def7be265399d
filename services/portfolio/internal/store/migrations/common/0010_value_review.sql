-- Whether an operator accepted an idea's name and values (docs/portfolio.md,
-- "Who sets what ranks an idea"). A contributor's idea waits for it: it
-- ranks after every accepted idea and the loop does not pick it. Ideas a
-- contributor created before this release are pending too: until now
-- their creator could set any value, so nothing says an operator saw
-- them; an operator accepts them with PATCH {"review_status": "accepted"}.
ALTER TABLE ideas ADD COLUMN values_accepted BOOLEAN NOT NULL DEFAULT TRUE;
UPDATE ideas SET values_accepted = FALSE WHERE created_by IS NOT NULL;

-- The ranked list reads accepted ideas first, each group by score.
DROP INDEX ideas_rank;
CREATE INDEX ideas_rank ON ideas (archived, values_accepted DESC, score DESC, id);
