package usecase

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Reading is what one oracle reading did.
type Reading struct {
	Price   money.Micros
	At      time.Time
	Source  string
	Verdict credit.Verdict
	State   credit.BreakerState
}

// ReadRate takes a reading from the configured rate source and records it.
// A fixed source is read only when it would change something (its price
// differs from the last reading, the breaker is open, or the last reading
// has left the moving-average window), so a pegged economy does not grow
// the readings table forever.
func (a *App) ReadRate(ctx context.Context) (Reading, bool, error) {
	price, err := a.cfg.Rates.Rate(ctx)
	if err != nil {
		return Reading{}, false, err
	}
	if _, fixed := a.cfg.Rates.(FixedRate); fixed {
		last, err := a.read().Credit.LatestReading(ctx)
		if err == nil && last.Reading.Price == price && !last.State.Tripped &&
			a.now().Sub(last.Reading.At) < a.cfg.Breaker.Window {
			return Reading{}, false, nil
		}
	}
	rd, err := a.ObservePrice(ctx, price, a.cfg.Rates.Name(), "oracle")
	return rd, true, err
}

// OraclePriceCmd is an administrator's manual reading of the exchange rate.
type OraclePriceCmd struct {
	// CCPerUSD is the request's cc_per_usd (credit.Amount, credit.MaxCC).
	CCPerUSD float64
	Actor    string
}

// RecordOraclePrice runs a manual reading through the circuit breaker
// (ObservePrice, source "manual") once its rate is a valid amount.
func (a *App) RecordOraclePrice(ctx context.Context, cmd OraclePriceCmd) (Reading, error) {
	price, err := credit.Amount("cc_per_usd", cmd.CCPerUSD, credit.MaxCC)
	if err != nil {
		return Reading{}, err
	}
	return a.ObservePrice(ctx, price, "manual", cmd.Actor)
}

// ObservePrice runs one price through the circuit breaker and records the
// reading, the breaker's new state, an audit entry when the breaker trips
// or recovers, and an incident when it trips, in one transaction.
func (a *App) ObservePrice(ctx context.Context, price money.Micros, source, actor string) (Reading, error) {
	// A price the economy cannot post a quote around (one micro-CC per
	// USD leaves no room for the spread) would become the rate in force
	// and fail every money operation after it.
	if _, err := credit.NewQuote(price, a.cfg.SpreadBP); err != nil {
		return Reading{}, fault.Validation(fault.Field("cc_per_usd", "must be a positive rate the economy can quote (more than 0.000001)"))
	}
	var out Reading
	err := a.tx(ctx, func(r Repos) error {
		eco, err := r.Credit.LockEconomy(ctx)
		if err != nil {
			return err
		}
		now := a.now()
		var prev credit.BreakerState
		if last, err := r.Credit.LatestReading(ctx); err == nil {
			prev = last.State
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		recent, err := r.Credit.ReadingsSince(ctx, now.Add(-a.cfg.Breaker.Window))
		if err != nil {
			return err
		}
		reading := credit.Reading{Price: price, At: now, Source: source}
		state, verdict := a.cfg.Breaker.Observe(prev, recent, reading)
		reading.Verdict = verdict
		if err := r.Credit.InsertReading(ctx, store.OracleReading{
			ID: a.cfg.NewID(), Reading: reading, Source: source, Verdict: verdict, State: state,
		}); err != nil {
			return err
		}
		out = Reading{Price: price, At: now, Source: source, Verdict: verdict, State: state}
		if verdict != credit.Tripped && verdict != credit.Recovered {
			return nil
		}
		attrs := map[string]string{"price": price.String(), "last_good": state.LastGood.String(), "source": source, "unit": "micro_cc_per_usd"}
		if verdict == credit.Recovered {
			attrs["tripped_at"] = prev.TrippedAt.Format(time.RFC3339Nano)
		}
		if err := a.appendOrQueue(ctx, r, &eco, audit.Entry{Kind: "oracle_" + string(verdict), At: now, Actor: actor,
			Subject: "exchange_rate", Amount: int64(price), Attrs: attrs}); err != nil {
			return err
		}
		if verdict == credit.Tripped {
			if err := r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: "oracle_tripped", Severity: "warning",
				Detail: "rate " + price.String() + " deviates more than " + bpText(a.cfg.Breaker.MaxDeviationBP) +
					" from the average of the accepted readings of the last " + durationText(a.cfg.Breaker.Window) +
					"; the rate stays at " + state.LastGood.String() + ", and deposits and withdrawals are refused until the breaker recovers",
				Actor: actor, CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil // appendOrQueue saved eco
	})
	return out, err
}

// durationText prints a duration without its zero units (1h, not 1h0m0s).
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func bpText(bp int64) string { return strconv.FormatFloat(float64(bp)/100, 'f', -1, 64) + "%" }
