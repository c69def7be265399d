package credit

import (
	"math/big"
	"math/bits"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// Reading is one price a rate source reported (micro-CC per USD).
type Reading struct {
	Price money.Micros
	At    time.Time
	// Source names where the price came from ("http", "fixed", "manual").
	Source string
	// Verdict is what the breaker made of the reading (empty for one not
	// yet observed).
	Verdict Verdict
}

// Accepted reports whether the reading became the rate (Accepted or
// Recovered). Only accepted readings make the average the breaker compares
// with: readings it refused never pull it along.
func (r Reading) Accepted() bool { return r.Verdict == Accepted || r.Verdict == Recovered }

// Breaker is the oracle circuit breaker's configuration.
type Breaker struct {
	// Window is the span of the average of accepted readings (1 hour).
	Window time.Duration
	// MaxDeviationBP is how far a reading may sit from that average before
	// it trips the breaker, in basis points (2000 is 20 %); a reading
	// exactly at the limit is clean.
	MaxDeviationBP int64
	// RecoverAfter is the number of consecutive clean readings (within
	// MaxDeviationBP of the accepted average) that close a tripped breaker
	// (3), once MinOpen has passed.
	RecoverAfter int
	// MinOpen is the least time a tripped breaker stays open (5 minutes),
	// however many clean readings arrive: a blip cannot reopen the
	// exchange at once, and operators see the incident first.
	MinOpen time.Duration
	// AgreeBP is how close a reading from a second source must be to a
	// reading to confirm it (100 is 1 %): two sources that agree on a new
	// level close the breaker there once MinOpen has passed, which is how
	// a real and lasting move becomes the rate (see Observe).
	AgreeBP int64
}

// DefaultBreaker is the economy's breaker: 20 % from the 1-hour average of
// accepted readings trips it; 3 consecutive clean readings recover it, or a
// second source agreeing within 1 %, and never sooner than 5 minutes after
// the trip.
var DefaultBreaker = Breaker{Window: time.Hour, MaxDeviationBP: 2000, RecoverAfter: 3, MinOpen: 5 * time.Minute, AgreeBP: 100}

// BreakerState is what the breaker remembers between readings; it is
// persisted with each reading so every replica agrees on it.
type BreakerState struct {
	// Tripped is true while readings are not trusted: the rate stays at
	// LastGood, and nothing is exchanged between USD and CC at it.
	Tripped bool
	// Clean counts consecutive clean readings while tripped.
	Clean int
	// LastGood is the rate in force: the last reading accepted while the
	// breaker was closed (or that closed it). Zero before the first reading.
	LastGood money.Micros
	// TrippedAt is when the breaker opened; zero while it is closed.
	TrippedAt time.Time
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
	// short of the recovery count or of MinOpen); the rate stays at the
	// last good value.
	Held Verdict = "held"
	// Recovered: the reading closed the breaker and is the new rate.
	Recovered Verdict = "recovered"
)

// AcceptedAverage is the mean price of the accepted readings in
// [at-window, at) taken since the breaker last closed (the newest Recovered
// reading, itself included); ok is false when there are none. Readings the
// breaker refused (tripped or held) never count: with them, a source that
// kept repeating a manipulated price pulled the average towards it until
// the price passed as clean and became the rate (100, then 150 four times:
// the fifth "recovered" at 150, and the true 100 was then refused). And
// the readings accepted before a recovery do not count after it: when a
// second source has confirmed a new level, the old one must not trip the
// breaker again at the next reading.
func (b Breaker) AcceptedAverage(readings []Reading, at time.Time) (avg money.Micros, ok bool) {
	from := at.Add(-b.Window)
	for _, r := range readings {
		if r.Verdict == Recovered && r.At.After(from) && r.At.Before(at) {
			from = r.At
		}
	}
	// The sum is exact: an int64 one wrapped around with a few large
	// readings, and a negative average passed any reading as clean.
	sum := new(big.Int)
	var n int64
	for _, r := range readings {
		if !r.Accepted() || r.At.Before(from) || !r.At.Before(at) {
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
	return deviates(price, avg, b.MaxDeviationBP)
}

// deviates reports whether |price - ref| / ref > bp / 10000, exactly.
func deviates(price, ref money.Micros, bp int64) bool {
	// |price - ref|, exact in a uint64 for any two int64.
	d := uint64(price) - uint64(ref)
	if price < ref {
		d = uint64(ref) - uint64(price)
	}
	// d/ref > bp/10000, compared in 128 bits: a reading a billion CC per
	// USD from the average overflowed 64 and passed as clean.
	lh, ll := bits.Mul64(d, bpScale)
	rh, rl := bits.Mul64(uint64(bp), uint64(ref))
	return lh > rh || (lh == rh && ll > rl)
}

// Observe applies one reading r. recent holds the earlier readings (any
// order; those outside the window are ignored), each marked accepted or
// not and with its source.
//
// The reference is the average of the accepted readings in the window, or
// the last good value when there are none; the very first reading is
// always accepted. While the breaker is closed, a reading within
// MaxDeviationBP of the reference becomes the rate and one beyond it trips
// the breaker. While it is open, nothing it refuses enters the average, and
// a reading closes it (Recovered, and becomes the rate) only once MinOpen
// has passed since the trip and either
//
//   - it is the RecoverAfter-th consecutive reading within MaxDeviationBP
//     of the reference: the price is back where it was trusted; or
//   - the newest reading since the trip from another source agrees with it
//     within AgreeBP: a second source confirms a new level, which one
//     source repeating itself cannot do.
//
// Any other reading is Held; one beyond the reference starts the clean
// count over.
func (b Breaker) Observe(s BreakerState, recent []Reading, r Reading) (BreakerState, Verdict) {
	ref, ok := b.AcceptedAverage(recent, r.At)
	if !ok {
		ref = s.LastGood
	}
	clean := ref <= 0 || !b.Deviates(r.Price, ref)
	if !s.Tripped {
		if clean {
			return BreakerState{LastGood: r.Price}, Accepted
		}
		return BreakerState{Tripped: true, LastGood: s.LastGood, TrippedAt: r.At}, Tripped
	}
	served := !r.At.Before(s.TrippedAt.Add(b.MinOpen))
	switch {
	case clean && served && s.Clean+1 >= b.RecoverAfter:
		return BreakerState{LastGood: r.Price}, Recovered
	case clean:
		return BreakerState{Tripped: true, Clean: s.Clean + 1, LastGood: s.LastGood, TrippedAt: s.TrippedAt}, Held
	case served && b.confirmed(s, recent, r):
		return BreakerState{LastGood: r.Price}, Recovered
	default:
		return BreakerState{Tripped: true, LastGood: s.LastGood, TrippedAt: s.TrippedAt}, Held
	}
}

// confirmed reports whether the newest reading taken since the trip (and
// within the window, before r) from a source other than r's agrees with r
// within AgreeBP.
func (b Breaker) confirmed(s BreakerState, recent []Reading, r Reading) bool {
	from := r.At.Add(-b.Window)
	var other *Reading
	for i := range recent {
		o := &recent[i]
		if o.Source == r.Source || o.At.Before(s.TrippedAt) || o.At.Before(from) || !o.At.Before(r.At) {
			continue
		}
		if other == nil || o.At.After(other.At) {
			other = o
		}
	}
	return other != nil && r.Price > 0 && !deviates(other.Price, r.Price, b.AgreeBP)
}
