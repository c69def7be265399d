-- A kept count of the assets, the total GET /api/assets answers: each page
-- counted the whole table (issue 38). Migration 0027's trigger function
-- counts each asset as it is inserted, in the transaction that inserts
-- it; assets are never deleted. The table is locked while it is counted,
-- so no asset slips between the count and the trigger.
LOCK TABLE assets IN SHARE MODE;
INSERT INTO row_counts (name, shard, n) SELECT 'assets', 0, COUNT(*) FROM assets;
CREATE TRIGGER assets_counted AFTER INSERT ON assets
    FOR EACH ROW EXECUTE FUNCTION count_inserted_row();
