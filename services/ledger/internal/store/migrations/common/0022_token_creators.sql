-- The API token that created each token (NULL: the administrator key, or
-- a token created before this release). A token creates only tokens
-- within its own grant and revokes only itself and what it created
-- (identity.CheckGrant, CheckRevoke); listing shows each token's creator
-- and whether that creator was revoked.
ALTER TABLE api_tokens ADD COLUMN created_by TEXT;
