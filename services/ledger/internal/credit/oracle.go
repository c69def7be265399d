package credit

import (
	"math/big"
	"math/bits"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// Reading is one price the rate source reported (micro-CC per USD).
type Reading struct {
	Price money.Micros
	At    time.Time
}

// Breaker is the oracle circuit breaker's configuration.
type Breaker struct {
	// Window is the span of the moving average (1 hour).
	Window time.Duration
	// MaxDeviationBP is how far a reading may sit from the moving average
	// before it trips the breaker, in basis points (2000 is 20 %); a reading
	// exactly at the limit is clean.
	MaxDeviationBP int64
	// RecoverAfter is the number of consecutive clean readings that close a
	// tripped breaker (3).
	RecoverAfter int
}

// DefaultBreaker is the contract's breaker: 20 % from the 1-hour moving
// average trips it, 3 consecutive clean readings recover.
var DefaultBreaker = Breaker{Window: time.Hour, MaxDeviationBP: 2000, RecoverAfter: 3}

// BreakerState is what the breaker remembers between readings; it is
// persisted with each reading so every replica agrees on it.
type BreakerState struct {
	// Tripped is true while readings are not trusted.
	Tripped bool
	// Clean counts consecutive clean readings while tripped.
	Clean int
	// LastGood is the rate in force: the last reading accepted while the
	// breaker was closed. Zero before the first reading.
	LastGood money.Micros
}

// Verdict says what one reading did.
type Verdict string

// The verdicts.
const (
	// Accepted: the breaker is closed and the reading is the new rate.
	Accepted Verdict = "accepted"
	// Tripped: the reading deviated; the rate stays at the last good value.
	Tripped Verdict = "tripped"
	// Held: the breaker stays open (a deviating reading, or a clean one
	// short of the recovery count); the rate stays at the last good value.
	Held Verdict = "held"
	// Recovered: the last clean reading closed the breaker and is the new rate.
	Recovered Verdict = "recovered"
)

// MovingAverage is the mean price of the readings in [at-window, at); ok is
// false when there are none. Every reading counts, accepted or not: the
// average is the oracle's own, so a real and lasting move pulls it along
// and the breaker recovers, while a lone spike barely moves it.
func (b Breaker) MovingAverage(readings []Reading, at time.Time) (avg money.Micros, ok bool) {
	from := at.Add(-b.Window)
	// The sum is exact: an int64 one wrapped around with a few large
	// readings, and a negative average passed any reading as clean.
	sum := new(big.Int)
	var n int64
	for _, r := range readings {
		if r.At.Before(from) || !r.At.Before(at) {
			continue
		}
		sum.Add(sum, big.NewInt(int64(r.Price)))
		n++
	}
	if n == 0 {
		return 0, false
	}
	return money.Micros(sum.Quo(sum, big.NewInt(n)).Int64()), true
}

// Deviates reports whether price sits more than MaxDeviationBP from avg
// (a positive average; MaxDeviationBP is not negative).
func (b Breaker) Deviates(price, avg money.Micros) bool {
	// |price - avg|, exact in a uint64 for any two int64.
	d := uint64(price) - uint64(avg)
	if price < avg {
		d = uint64(avg) - uint64(price)
	}
	// d/avg > bp/10000, compared in 128 bits: a reading a billion CC per
	// USD from the average overflowed 64 and passed as clean.
	lh, ll := bits.Mul64(d, bpScale)
	rh, rl := bits.Mul64(uint64(b.MaxDeviationBP), uint64(avg))
	return lh > rh || (lh == rh && ll > rl)
}

// Observe applies one reading. recent holds the earlier readings (any
// order; those outside the window are ignored). With no earlier reading in
// the window the reading is compared with the last good value, and the very
// first reading is always accepted.
func (b Breaker) Observe(s BreakerState, recent []Reading, r Reading) (BreakerState, Verdict) {
	ref, ok := b.MovingAverage(recent, r.At)
	if !ok {
		ref = s.LastGood
	}
	clean := ref <= 0 || !b.Deviates(r.Price, ref)
	switch {
	case !s.Tripped && clean:
		return BreakerState{LastGood: r.Price}, Accepted
	case !s.Tripped:
		return BreakerState{Tripped: true, LastGood: s.LastGood}, Tripped
	case !clean:
		return BreakerState{Tripped: true, LastGood: s.LastGood}, Held
	case s.Clean+1 >= b.RecoverAfter:
		return BreakerState{LastGood: r.Price}, Recovered
	default:
		return BreakerState{Tripped: true, Clean: s.Clean + 1, LastGood: s.LastGood}, Held
	}
}
