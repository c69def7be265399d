-- Value attribution: assets, contributions, GitHub deliveries, distributions.
-- Money columns are BIGINT micro-units (millionths, exact); times are Unix
-- microseconds (UTC). The credit economy's journal of CC movements arrives
-- in its own tables beside these.
CREATE TABLE assets (
    id                 TEXT PRIMARY KEY,
    type               TEXT NOT NULL CHECK (type IN ('CODE', 'MODEL', 'CONTENT', 'DATA')),
    name               TEXT NOT NULL,
    description        TEXT NOT NULL,
    github_repository  TEXT UNIQUE,          -- lowercased owner/name of a webhook-created asset
    total_cost_micros  BIGINT NOT NULL DEFAULT 0 CHECK (total_cost_micros >= 0),
    contribution_count INTEGER NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL
);

CREATE INDEX assets_created ON assets (created_at, id);

CREATE TABLE contributions (
    id             TEXT PRIMARY KEY,
    contributor_id TEXT NOT NULL REFERENCES contributors (id),
    asset_id       TEXT NOT NULL REFERENCES assets (id),
    cost_micros    BIGINT NOT NULL CHECK (cost_micros >= 0),
    coherence      INTEGER NOT NULL CHECK (coherence BETWEEN 0 AND 1000), -- thousandths
    metadata       TEXT NOT NULL,        -- a JSON object
    source         TEXT NOT NULL,        -- api or github
    created_at     BIGINT NOT NULL
);

CREATE INDEX contributions_asset ON contributions (asset_id, created_at, id);
CREATE INDEX contributions_contributor ON contributions (contributor_id, created_at, id);

-- One row per recorded X-GitHub-Delivery: the primary key makes a
-- redelivery find the original contribution instead of making another. The
-- row is written first in its transaction (so concurrent redeliveries queue
-- on the key at once), hence the deferred reference.
CREATE TABLE github_deliveries (
    delivery_id     TEXT PRIMARY KEY,
    contribution_id TEXT NOT NULL UNIQUE REFERENCES contributions (id) DEFERRABLE INITIALLY DEFERRED,
    received_at     BIGINT NOT NULL
);

CREATE TABLE distributions (
    id           TEXT PRIMARY KEY,
    asset_id     TEXT NOT NULL REFERENCES assets (id),
    value_micros BIGINT NOT NULL CHECK (value_micros >= 0),
    created_at   BIGINT NOT NULL
);

CREATE INDEX distributions_asset ON distributions (asset_id, created_at, id);

CREATE TABLE payouts (
    distribution_id TEXT NOT NULL REFERENCES distributions (id),
    position        INTEGER NOT NULL,    -- order in the distribution, from 0
    contributor_id  TEXT NOT NULL REFERENCES contributors (id),
    amount_micros   BIGINT NOT NULL CHECK (amount_micros >= 0), -- whole cents
    PRIMARY KEY (distribution_id, position),
    UNIQUE (distribution_id, contributor_id)
);
