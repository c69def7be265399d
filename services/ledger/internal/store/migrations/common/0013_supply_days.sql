-- supply_days keeps the economy's backing per UTC day, for the supply
-- history (GET /api/cc/supply/history): the day's last values, written by
-- the movements that change them (deposits, withdrawals, distributions paid
-- in CC) in the transaction that already holds the economy row, so the row
-- adds no contention. A history of N days reads at most N + 1 rows (the
-- days with a row, and the last one before the window, whose values carry
-- on into days without movements). Day keys are the day's midnight in Unix
-- microseconds; amounts micro-units, the reserve ratio as computed then
-- (credit.ReserveRatio at the rate of the movement).
--
-- A ledger upgraded to this migration has no history before its next
-- supply movement: those days answer null (the rate of their past is not
-- kept to recompute them).
CREATE TABLE supply_days (
    day             BIGINT PRIMARY KEY,
    outstanding_cc  BIGINT NOT NULL,
    treasury_usd    BIGINT NOT NULL,
    reserve_ratio   DOUBLE PRECISION NOT NULL,
    updated_at      BIGINT NOT NULL
);
