-- A kept count of the assets (postgres/0028_asset_count.sql says why).
-- SQLite has one writer: no asset is inserted between the count and the
-- trigger.
INSERT INTO row_counts (name, shard, n) SELECT 'assets', 0, COUNT(*) FROM assets;
CREATE TRIGGER assets_counted AFTER INSERT ON assets
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'assets' AND shard = 0;
END;
