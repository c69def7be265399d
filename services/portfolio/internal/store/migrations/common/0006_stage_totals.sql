-- stage_totals counts the active ideas of each stage, kept in step in the
-- same transaction as every idea write (as portfolio_totals is), so the
-- ideas-by-stage gauge of /metrics reads a handful of rows instead of
-- grouping the portfolio (stage has no index, and a count per scrape would
-- walk every idea). A stage without a row has no active idea.
CREATE TABLE stage_totals (
    stage TEXT PRIMARY KEY,
    ideas BIGINT NOT NULL
);

INSERT INTO stage_totals (stage, ideas)
SELECT stage, COUNT(*) FROM ideas WHERE archived = FALSE GROUP BY stage;
