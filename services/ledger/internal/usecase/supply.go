package usecase

import (
	"context"
	"errors"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Rate is the posted exchange rate with the breaker's state.
type Rate struct {
	Quote   credit.Quote
	Source  string
	Breaker credit.BreakerState
	// AsOf is when the rate in force was read (zero before any reading).
	AsOf time.Time
}

// quote is the rate in force: the breaker's last good value from the
// newest reading, or the source's configured default before the first.
func (a *App) quote(ctx context.Context, r Repos) (Rate, error) {
	last, err := r.Credit.LatestReading(ctx)
	mid := DefaultCCPerUSD
	if f, ok := a.cfg.Rates.(FixedRate); ok {
		mid = money.Micros(f)
	}
	out := Rate{Source: a.cfg.Rates.Name()}
	switch {
	case err == nil && last.State.LastGood > 0:
		mid, out.Breaker, out.AsOf, out.Source = last.State.LastGood, last.State, last.Reading.At, last.Source
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return Rate{}, err
	}
	q, err := credit.NewQuote(mid, a.cfg.SpreadBP)
	if err != nil {
		return Rate{}, err
	}
	out.Quote = q
	return out, nil
}

// ExchangeRate is the posted rate.
func (a *App) ExchangeRate(ctx context.Context) (Rate, error) { return a.quote(ctx, a.read()) }

// Supply is the economy's backing.
type Supply struct {
	OutstandingCC money.Micros
	TreasuryUSD   money.Micros
	Rate          Rate
	ReserveRatio  float64
	// Mode is the economy's mode (normal, warning, minting_paused, read_only, frozen).
	Mode       string
	ModeReason string
	ModeSince  time.Time
}

// Supply reports the CC outstanding, the treasury and the reserve ratio.
func (a *App) Supply(ctx context.Context) (Supply, error) {
	r := a.read()
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return Supply{}, err
	}
	rate, err := a.quote(ctx, r)
	if err != nil {
		return Supply{}, err
	}
	return Supply{
		OutstandingCC: eco.OutstandingCC, TreasuryUSD: eco.TreasuryUSD, Rate: rate,
		ReserveRatio: credit.ReserveRatio(eco.OutstandingCC, eco.TreasuryUSD, rate.Quote.Mid),
		Mode:         eco.Mode, ModeReason: eco.ModeReason, ModeSince: eco.ModeSince,
	}, nil
}
