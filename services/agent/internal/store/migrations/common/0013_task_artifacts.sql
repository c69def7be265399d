-- artifact is what a task produced beside its output: a text or a URL to
-- it, at most 64 KiB (usecase.MaxArtifact), as its worker reported it.
-- The next stage's task of a loop idea carries it in its context and
-- prompt. NULL when none, as for every task before this release.
ALTER TABLE tasks ADD COLUMN artifact TEXT;
