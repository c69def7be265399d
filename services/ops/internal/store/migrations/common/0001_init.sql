-- The ops service owns this schema. Version 1 only establishes it (the
-- migrator creates the schema and its schema_migrations table); the ops
-- tables arrive as later versions with the features that use them.
SELECT 1;
