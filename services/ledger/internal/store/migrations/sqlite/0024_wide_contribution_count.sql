-- Postgres widens assets.contribution_count to BIGINT in this version;
-- SQLite's INTEGER is already 64-bit, so nothing changes here.
SELECT 1;
