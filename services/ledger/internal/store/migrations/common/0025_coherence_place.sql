-- coherence_place is where the monitor's coherence check resumes its
-- reconciliation of the journal with the audit trail: after the journal
-- entry (journal_after_at, journal_after_id) in (created_at, id) order,
-- and after the audit entry log_after. One row. The check compared the
-- whole history every interval (21.6 s at 10^6 rows); it now checks what
-- was written since, a bounded slice a check, and the integrity scrubber's
-- paced cycle re-checks everything (docs/ledger.md, "Coherence").
CREATE TABLE coherence_place (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    journal_after_at BIGINT NOT NULL,
    journal_after_id TEXT NOT NULL,
    log_after        BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
