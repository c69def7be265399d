-- The unfiltered list of contributions (GET /api/contributions) and of
-- contributors (GET /api/contributors) read in (created_at, id) order: these
-- indexes give both lists their order without a sort, and a keyset page of
-- contributions its start without walking an offset.
CREATE INDEX contributions_created ON contributions (created_at, id);
CREATE INDEX contributors_created ON contributors (created_at, id);
