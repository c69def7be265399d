-- Every journal entry is recorded by exactly one audit entry
-- (docs/ledger.md, "Journal and audit trail"). A movement takes the next
-- sequence number after the economy row's audit_seq; if audit entries were
-- deleted and that head rewound, the next movement used to take a number a
-- journal entry already held, and two journal entries then shared one audit
-- entry. The unique index below refuses that insert.
--
-- The index must build on a database where that already happened, so the
-- migration cannot simply fail on duplicates, and it must not rewrite a
-- journal row's audit_seq either (that would hide the tampering and break
-- what the audit entry says). Instead audit_seq_duplicate numbers the
-- entries sharing an audit_seq when this migration runs: 0 for the first
-- (oldest, then lowest id), 1, 2, ... for the others; every entry written
-- since has 0. The index is unique on (audit_seq, audit_seq_duplicate), so
-- no new entry can take an audit_seq any entry holds, and the old
-- duplicates stay where they are for the coherence check to report (their
-- audit entry names another entry id, or none).
ALTER TABLE cc_entries ADD COLUMN audit_seq_duplicate INTEGER NOT NULL DEFAULT 0;

-- Only the audit_seqs held more than once are renumbered (the IN list is
-- computed once), so the correlated count runs over a handful of rows.
UPDATE cc_entries SET audit_seq_duplicate = (
        SELECT COUNT(*) FROM cc_entries e
        WHERE e.audit_seq = cc_entries.audit_seq
            AND (e.created_at < cc_entries.created_at OR (e.created_at = cc_entries.created_at AND e.id < cc_entries.id)))
    WHERE audit_seq IN (SELECT audit_seq FROM cc_entries GROUP BY audit_seq HAVING COUNT(*) > 1);

CREATE UNIQUE INDEX cc_entries_audit_seq ON cc_entries (audit_seq, audit_seq_duplicate);
