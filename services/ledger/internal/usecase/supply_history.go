package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// The supply history's window, in days.
const (
	DefaultHistoryDays = 30
	MaxHistoryDays     = 366
)

// SupplyPoint is the backing at the end of one UTC day; Known is false for
// the days before the ledger recorded any.
type SupplyPoint struct {
	Day           time.Time
	Known         bool
	OutstandingCC money.Micros
	TreasuryUSD   money.Micros
	ReserveRatio  float64
}

// SupplyHistory returns the last days UTC days, today included and oldest
// first, every day present: a day without a supply movement carries the
// values of the last day before it that had one. It reads at most the
// window's days plus one row (store.Credit.SupplyDays), however long the
// ledger has run.
func (a *App) SupplyHistory(ctx context.Context, days *int32) ([]SupplyPoint, error) {
	n := int32(DefaultHistoryDays)
	if days != nil {
		if *days < 1 || *days > MaxHistoryDays {
			return nil, fault.Validation(fault.Field("days", "must be between 1 and %d", MaxHistoryDays))
		}
		n = *days
	}
	today := a.now().UTC().Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, -int(n-1))
	rows, err := a.read().Credit.SupplyDays(ctx, from, today.AddDate(0, 0, 1))
	if err != nil {
		return nil, err
	}
	out := make([]SupplyPoint, n)
	var last *SupplyPoint
	next := 0
	for i := range out {
		day := from.AddDate(0, 0, i)
		for next < len(rows) && !rows[next].Day.After(day) {
			r := rows[next]
			last = &SupplyPoint{Known: true, OutstandingCC: r.OutstandingCC, TreasuryUSD: r.TreasuryUSD, ReserveRatio: r.ReserveRatio}
			next++
		}
		if last != nil {
			out[i] = *last
		}
		out[i].Day = day
	}
	return out, nil
}
