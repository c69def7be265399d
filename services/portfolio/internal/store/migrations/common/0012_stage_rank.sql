-- The progress dashboard lists a page of each stage's active ideas, best
-- score first. It read every active idea to do so (at 10^6 ideas: 30 s
-- and gigabytes); each stage's page is now a range of this index, and
-- the counts come from stage_totals, which every write keeps.
CREATE INDEX ideas_stage_rank ON ideas (archived, stage, score DESC, id);
