-- The changes of the audit log's signing key (docs/ledger.md, "Keys"):
-- each is an entry of kind key_changed whose signed statement names the
-- old key and the new one. The ledger reads them whenever a checkpoint
-- is signed by a key other than its own (a previous key signs nothing
-- past its change), and GET /api/audit/verifier-key serves them to
-- clients that follow a change.
CREATE INDEX audit_entries_key_changes ON audit_entries (seq) WHERE kind = 'key_changed';
