package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Checks implements store.Checks over a querier.
type Checks struct {
	q database.Querier
}

var _ store.Checks = Checks{}

// NewChecks returns the checks repository over q.
func NewChecks(q database.Querier) Checks { return Checks{q: q} }

// Insert implements store.Checks.
func (c Checks) Insert(ctx context.Context, r monitor.Record) error {
	reasons, err := json.Marshal(r.Decision.Reasons)
	if err != nil {
		return fmt.Errorf("encode reasons: %w", err)
	}
	_, err = c.q.Exec(ctx, `INSERT INTO monitor_checks (id, checked_at, holder, reserve_ratio, chain_valid, first_divergent,
		mismatched, breaker_tripped, mode_before, decided_mode, applied, score, reasons, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		r.ID, database.Micros(r.CheckedAt), r.Holder, r.Check.ReserveRatio, boolInt(r.Check.ChainValid), r.Check.FirstDivergent,
		len(r.Check.Mismatched), boolInt(r.Check.BreakerTripped), r.Check.Mode, r.Decision.Mode, boolInt(r.Applied),
		r.Decision.Score, string(reasons), r.Error)
	if err != nil {
		return fmt.Errorf("record monitor check: %w", err)
	}
	return nil
}

// Latest implements store.Checks.
func (c Checks) Latest(ctx context.Context) (monitor.Record, error) {
	var (
		r                            monitor.Record
		at                           int64
		valid, tripped, applied, mis int
		reasons                      string
	)
	err := c.q.QueryRow(ctx, `SELECT id, checked_at, holder, reserve_ratio, chain_valid, first_divergent, mismatched,
		breaker_tripped, mode_before, decided_mode, applied, score, reasons, error
		FROM monitor_checks ORDER BY checked_at DESC, id DESC LIMIT 1`).
		Scan(&r.ID, &at, &r.Holder, &r.Check.ReserveRatio, &valid, &r.Check.FirstDivergent, &mis, &tripped,
			&r.Check.Mode, &r.Decision.Mode, &applied, &r.Decision.Score, &reasons, &r.Error)
	if errors.Is(err, database.ErrNoRows) {
		return monitor.Record{}, fmt.Errorf("latest monitor check: %w", store.ErrNotFound)
	}
	if err != nil {
		return monitor.Record{}, fmt.Errorf("read the latest monitor check: %w", err)
	}
	r.CheckedAt = database.Time(at)
	r.Check.ChainValid, r.Check.BreakerTripped, r.Applied = valid == 1, tripped == 1, applied == 1
	r.Mismatched = mis
	if err := json.Unmarshal([]byte(reasons), &r.Decision.Reasons); err != nil {
		return monitor.Record{}, fmt.Errorf("decode monitor reasons: %w", err)
	}
	return r, nil
}

// Streak implements store.Checks. A completed check always has the
// ledger's mode in mode_before; a failed one has ”. The mode in force is
// the one the newest check that knew or changed it left: its decided mode
// when it was applied (a failed check's escalation included), else the
// mode it saw. Records are pruned after a week, so with none in that time
// LastMode is ”.
func (c Checks) Streak(ctx context.Context) (monitor.Streak, error) {
	var (
		s               monitor.Streak
		before, decided string
		applied         int
		since           int64 = -1
	)
	err := c.q.QueryRow(ctx, `SELECT COALESCE(MAX(checked_at), -1) FROM monitor_checks WHERE mode_before <> ''`).Scan(&since)
	if err != nil {
		return monitor.Streak{}, fmt.Errorf("read the latest completed monitor check: %w", err)
	}
	if err := c.q.QueryRow(ctx, `SELECT COUNT(*) FROM monitor_checks WHERE mode_before = '' AND checked_at > $1`, since).
		Scan(&s.Failed); err != nil {
		return monitor.Streak{}, fmt.Errorf("count failed monitor checks: %w", err)
	}
	err = c.q.QueryRow(ctx, `SELECT mode_before, decided_mode, applied FROM monitor_checks
		WHERE mode_before <> '' OR applied = 1 ORDER BY checked_at DESC, id DESC LIMIT 1`).Scan(&before, &decided, &applied)
	switch {
	case errors.Is(err, database.ErrNoRows):
	case err != nil:
		return monitor.Streak{}, fmt.Errorf("read the mode the monitor last saw: %w", err)
	case applied == 1:
		s.LastMode = decided
	default:
		s.LastMode = before
	}
	return s, nil
}

// Prune implements store.Checks.
func (c Checks) Prune(ctx context.Context, before time.Time) (int64, error) {
	n, err := c.q.Exec(ctx, `DELETE FROM monitor_checks WHERE checked_at < $1`, database.Micros(before))
	if err != nil {
		return 0, fmt.Errorf("prune monitor checks: %w", err)
	}
	return n, nil
}
