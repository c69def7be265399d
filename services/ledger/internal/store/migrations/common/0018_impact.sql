-- An idea's proven impact (docs/ledger.md, "Impact and attribution").
--
-- impact_records holds every usage and revenue record, once per (idea,
-- reference): a retry with the same reference finds the record and
-- changes nothing. Quantities and amounts are micro-units; a usage record
-- keeps the attribution it added over all positions (earned_cc), a
-- revenue record the USD it brought, the CC it minted and paid, the
-- spread it kept and its first journal entry. Each record is also an
-- audit entry (a revenue record one per payee, as a movement).
CREATE TABLE impact_records (
    id          TEXT PRIMARY KEY,
    idea_id     TEXT NOT NULL,
    reference   TEXT NOT NULL,
    kind        TEXT NOT NULL,
    quantity    BIGINT NOT NULL DEFAULT 0,
    unit        TEXT NOT NULL DEFAULT '',
    amount_usd  BIGINT NOT NULL DEFAULT 0,
    minted_cc   BIGINT NOT NULL DEFAULT 0,
    fee_usd     BIGINT NOT NULL DEFAULT 0,
    earned_cc   BIGINT NOT NULL DEFAULT 0,
    positions   INTEGER NOT NULL DEFAULT 0,
    evidence    TEXT NOT NULL,
    entry_id    TEXT,
    actor       TEXT NOT NULL,
    source      TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (idea_id, reference)
);

-- An idea's records newest first, a page at a time.
CREATE INDEX impact_records_idea ON impact_records (idea_id, created_at, id);

-- cc_attributions is what a contributor's position on an idea earned
-- (usage records) and realized (revenue paid to it), beside the CC it
-- has staked, which stays in cc_accounts. Rows are added to, never
-- replaced, so concurrent records lose nothing. A position unstaked to
-- zero keeps its row; it earns and is paid nothing until it stakes again.
CREATE TABLE cc_attributions (
    contributor_id TEXT NOT NULL,
    idea_id        TEXT NOT NULL,
    earned_cc      BIGINT NOT NULL DEFAULT 0,
    realized_cc    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (contributor_id, idea_id)
);
