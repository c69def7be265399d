package credit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// tape runs readings through a breaker the way the ledger does: each
// reading sees the earlier ones, marked accepted when their verdict made
// them the rate.
type tape struct {
	b        credit.Breaker
	s        credit.BreakerState
	readings []credit.Reading
	at       time.Time
}

func newTape(b credit.Breaker) *tape { return &tape{b: b, at: t0} }

// read feeds one reading from source, step after the previous one.
func (tp *tape) read(step time.Duration, source string, price money.Micros) credit.Verdict {
	tp.at = tp.at.Add(step)
	r := credit.Reading{Price: price, At: tp.at, Source: source}
	var v credit.Verdict
	tp.s, v = tp.b.Observe(tp.s, tp.readings, r)
	r.Verdict = v
	tp.readings = append(tp.readings, r)
	return v
}

// feed runs prices from one source through the breaker step apart and
// returns the verdicts and the final state.
func feed(b credit.Breaker, step time.Duration, prices ...money.Micros) ([]credit.Verdict, credit.BreakerState) {
	tp := newTape(b)
	out := make([]credit.Verdict, len(prices))
	for i, p := range prices {
		out[i] = tp.read(step, "oracle", p)
	}
	return out, tp.s
}

func repeat(p money.Micros, n int) []money.Micros {
	out := make([]money.Micros, n)
	for i := range out {
		out[i] = p
	}
	return out
}

func TestBreakerTripsAndRecovers(t *testing.T) {
	t.Parallel()
	b := credit.DefaultBreaker
	// Two minutes apart: the third clean reading comes 6 minutes after
	// the trip, past the 5-minute minimum.
	verdicts, s := feed(b, 2*time.Minute, 100*cc, 100*cc, 100*cc, 130*cc, 101*cc, 100*cc)
	require.Equal(t, []credit.Verdict{
		credit.Accepted, credit.Accepted, credit.Accepted,
		credit.Tripped, // 30% above the 100 average
		credit.Held,    // clean, 1 of 3
		credit.Held,    // clean, 2 of 3
	}, verdicts)
	require.True(t, s.Tripped)
	require.Equal(t, money.Micros(100*cc), s.LastGood, "the rate stays at the last good value")
	require.Equal(t, t0.Add(8*time.Minute), s.TrippedAt, "when the breaker opened")

	verdicts, s = feed(b, 2*time.Minute, 100*cc, 100*cc, 100*cc, 130*cc, 101*cc, 100*cc, 99*cc)
	require.Equal(t, credit.Recovered, verdicts[len(verdicts)-1], "third clean reading recovers")
	require.False(t, s.Tripped)
	require.True(t, s.TrippedAt.IsZero())
	require.Equal(t, money.Micros(99*cc), s.LastGood)
}

// TestBreakerStaysOpenTheMinimumTime: clean readings keep counting, but
// none closes the breaker before MinOpen has passed since the trip.
func TestBreakerStaysOpenTheMinimumTime(t *testing.T) {
	t.Parallel()
	tp := newTape(credit.DefaultBreaker)
	tp.read(time.Minute, "oracle", 100*cc)
	tp.read(time.Minute, "oracle", 100*cc)
	require.Equal(t, credit.Tripped, tp.read(time.Minute, "oracle", 130*cc))
	for i := range 4 { // 1 to 4 minutes after the trip
		require.Equal(t, credit.Held, tp.read(time.Minute, "oracle", 100*cc))
		require.Equal(t, i+1, tp.s.Clean)
	}
	require.Equal(t, credit.Held, tp.read(time.Minute-time.Microsecond, "oracle", 100*cc), "a microsecond short of 5 minutes")
	require.Equal(t, credit.Recovered, tp.read(time.Microsecond, "oracle", 100*cc), "5 minutes after the trip")
	require.Equal(t, credit.Accepted, tp.read(time.Minute, "oracle", 101*cc))
}

func TestBreakerDirtyReadingResetsRecovery(t *testing.T) {
	t.Parallel()
	prices := append(repeat(100*cc, 10), 200*cc, 100*cc, 100*cc, 200*cc, 100*cc, 100*cc)
	verdicts, s := feed(credit.DefaultBreaker, 2*time.Minute, prices...)
	require.Equal(t, []credit.Verdict{
		credit.Tripped,           // 200 against an average of 100
		credit.Held, credit.Held, // clean 1, 2
		credit.Held,              // dirty again: the count starts over
		credit.Held, credit.Held, // clean 1, 2
	}, verdicts[10:])
	require.True(t, s.Tripped)
	require.Equal(t, 2, s.Clean)
	require.Equal(t, money.Micros(100*cc), s.LastGood)
	require.Equal(t, t0.Add(22*time.Minute), s.TrippedAt, "a reading that deviates while open does not restart the minimum time")
}

func TestBreakerBoundaryIsClean(t *testing.T) {
	t.Parallel()
	verdicts, _ := feed(credit.DefaultBreaker, time.Minute, 100*cc, 120*cc)
	require.Equal(t, credit.Accepted, verdicts[1], "exactly 20% is not more than 20%")
	verdicts, _ = feed(credit.DefaultBreaker, time.Minute, 100*cc, 120*cc+1)
	require.Equal(t, credit.Tripped, verdicts[1])
	verdicts, _ = feed(credit.DefaultBreaker, time.Minute, 100*cc, 80*cc-1)
	require.Equal(t, credit.Tripped, verdicts[1], "a drop trips too")
}

// TestBreakerCannotBeWalked is the walk: 100, then 150 four
// times. The refused readings used to count in the average, so the fifth
// "recovered" at 150 and the true 100 was then held 8 times. Only accepted
// readings count now: the 150s are held however long they repeat, and the
// true 100 closes the breaker as soon as the minimum time has passed.
func TestBreakerCannotBeWalked(t *testing.T) {
	t.Parallel()
	verdicts, s := feed(credit.DefaultBreaker, time.Minute, 100*cc, 150*cc, 150*cc, 150*cc, 150*cc)
	require.Equal(t, []credit.Verdict{credit.Accepted, credit.Tripped, credit.Held, credit.Held, credit.Held}, verdicts)
	require.Equal(t, money.Micros(100*cc), s.LastGood)
	require.Zero(t, s.Clean)

	// The manipulated price, repeated for five hours: never the rate.
	verdicts, s = feed(credit.DefaultBreaker, time.Minute, append([]money.Micros{100 * cc}, repeat(150*cc, 300)...)...)
	for i, v := range verdicts[2:] {
		require.Equal(t, credit.Held, v, "reading %d", i+2)
	}
	require.Equal(t, money.Micros(100*cc), s.LastGood)

	// The true 100 afterwards: clean at once, and the rate again at the
	// third clean reading, the breaker having been open 5 minutes by then
	// (the trip was at minute 2, the 150s at minutes 3 to 5, the 100s from
	// minute 6); then accepted as before.
	verdicts, s = feed(credit.DefaultBreaker, time.Minute, 100*cc, 150*cc, 150*cc, 150*cc, 150*cc, 100*cc, 100*cc, 100*cc, 100*cc)
	require.Equal(t, []credit.Verdict{credit.Held, credit.Held, credit.Recovered, credit.Accepted}, verdicts[5:])
	require.False(t, s.Tripped)
	require.Equal(t, money.Micros(100*cc), s.LastGood)
}

// TestBreakerLastingMoveNeedsASecondSource: a real and lasting move is
// what a manipulated source looks like, so one source cannot carry the
// rate there; a second source agreeing within 1 % can, after the minimum
// time.
func TestBreakerLastingMoveNeedsASecondSource(t *testing.T) {
	t.Parallel()
	tp := newTape(credit.DefaultBreaker)
	tp.read(time.Minute, "http", 100*cc)
	tp.read(time.Minute, "http", 100*cc)
	require.Equal(t, credit.Tripped, tp.read(time.Minute, "http", 150*cc))
	for range 30 {
		require.Equal(t, credit.Held, tp.read(time.Minute, "http", 150*cc), "one source repeating itself")
	}
	require.Equal(t, credit.Held, tp.read(time.Minute, "manual", 152*cc), "a second source 1.3 % away does not agree")
	require.Equal(t, credit.Recovered, tp.read(time.Minute, "manual", 151*cc), "a second source within 1 %")
	require.Equal(t, money.Micros(151*cc), tp.s.LastGood)
	// The readings accepted at 100 are still in the hour, but the average
	// starts again at the recovery: the new level does not trip it.
	for range 5 {
		require.Equal(t, credit.Accepted, tp.read(time.Minute, "http", 150*cc), "the new level is the average now")
	}
	require.Equal(t, credit.Tripped, tp.read(time.Minute, "http", 100*cc), "and the old one is a deviation from it")

	// A second source agreeing before the minimum time has passed is
	// held; so is the reading after it, until 5 minutes have passed.
	tp = newTape(credit.DefaultBreaker)
	tp.read(time.Minute, "http", 100*cc)
	require.Equal(t, credit.Tripped, tp.read(time.Minute, "http", 150*cc))
	require.Equal(t, credit.Held, tp.read(time.Minute, "manual", 150*cc), "agreeing, but a minute after the trip")

	require.Equal(t, credit.Held, tp.read(time.Minute, "http", 150*cc))
	// The oracle's own reading closes it when the second source spoke
	// first, once the minimum time has passed.
	require.Equal(t, credit.Recovered, tp.read(3*time.Minute, "http", 150*cc), "the manual reading since the trip confirms it")

	// A second source's reading from before the trip confirms nothing.
	tp = newTape(credit.DefaultBreaker)
	tp.read(time.Minute, "manual", 100*cc)
	tp.read(time.Minute, "http", 100*cc)
	require.Equal(t, credit.Tripped, tp.read(time.Minute, "http", 100*cc+20*cc+1))
	require.Equal(t, credit.Held, tp.read(10*time.Minute, "http", 120*cc+2))

	// The newest other reading decides: one that went back to 100 does
	// not confirm 150, though an earlier one said 150.
	tp = newTape(credit.DefaultBreaker)
	tp.read(time.Minute, "http", 100*cc)
	require.Equal(t, credit.Tripped, tp.read(time.Minute, "http", 150*cc))
	require.Equal(t, credit.Held, tp.read(time.Minute, "manual", 150*cc))
	require.Equal(t, credit.Held, tp.read(time.Minute, "fixed", 100*cc), "clean, 1 of 3")
	require.Equal(t, credit.Held, tp.read(10*time.Minute, "http", 150*cc))
}

// TestBreakerOneSourceNeverRecoversAway: whatever prices one source sends,
// a reading that closes the breaker is within the deviation of the
// average of the readings accepted before it (or of the last good value):
// repeating a price the breaker refused never makes it the rate.
func TestBreakerOneSourceNeverRecoversAway(t *testing.T) {
	t.Parallel()
	b := credit.DefaultBreaker
	rapid.Check(t, func(t *rapid.T) {
		tp := newTape(b)
		n := rapid.IntRange(1, 120).Draw(t, "n")
		for i := range n {
			price := money.Micros(rapid.Int64Range(50, 200).Draw(t, "price")) * cc
			step := time.Duration(rapid.Int64Range(1, 600).Draw(t, "step")) * time.Second
			prev, before := tp.s, tp.readings
			v := tp.read(step, "oracle", price)
			if v != credit.Recovered {
				continue
			}
			ref, ok := b.AcceptedAverage(before, tp.at)
			if !ok {
				ref = prev.LastGood
			}
			if b.Deviates(price, ref) {
				t.Fatalf("reading %d recovered at %s, away from the accepted reference %s", i, price, ref)
			}
			if tp.at.Before(prev.TrippedAt.Add(b.MinOpen)) {
				t.Fatalf("reading %d recovered %s after the trip", i, tp.at.Sub(prev.TrippedAt))
			}
		}
	})
}

func TestAcceptedAverageWindow(t *testing.T) {
	t.Parallel()
	b := credit.DefaultBreaker
	now := t0.Add(2 * time.Hour)
	readings := []credit.Reading{
		{Price: 1000 * cc, At: now.Add(-61 * time.Minute), Verdict: credit.Accepted}, // outside
		{Price: 100 * cc, At: now.Add(-60 * time.Minute), Verdict: credit.Accepted},  // inside (window is inclusive at its start)
		{Price: 900 * cc, At: now.Add(-30 * time.Minute)},                            // refused: not in the average
		{Price: 200 * cc, At: now.Add(-time.Minute), Verdict: credit.Accepted},
		{Price: 5000 * cc, At: now, Verdict: credit.Accepted}, // not before now: excluded
	}
	avg, ok := b.AcceptedAverage(readings, now)
	require.True(t, ok)
	require.Equal(t, money.Micros(150*cc), avg)
	_, ok = b.AcceptedAverage(nil, now)
	require.False(t, ok)
	_, ok = b.AcceptedAverage(readings[2:3], now)
	require.False(t, ok, "refused readings alone make no average")
}
