package credit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// feed runs prices through the breaker one minute apart and returns the
// verdicts and the final state.
func feed(b credit.Breaker, prices ...money.Micros) ([]credit.Verdict, credit.BreakerState) {
	var (
		s        credit.BreakerState
		readings []credit.Reading
		out      []credit.Verdict
	)
	for i, p := range prices {
		r := credit.Reading{Price: p, At: t0.Add(time.Duration(i) * time.Minute)}
		var v credit.Verdict
		s, v = b.Observe(s, readings, r)
		readings = append(readings, r)
		out = append(out, v)
	}
	return out, s
}

func TestBreakerTripsAndRecovers(t *testing.T) {
	t.Parallel()
	b := credit.DefaultBreaker
	verdicts, s := feed(b, 100*cc, 100*cc, 100*cc, 130*cc, 101*cc, 100*cc)
	require.Equal(t, []credit.Verdict{
		credit.Accepted, credit.Accepted, credit.Accepted,
		credit.Tripped, // 30% above the 100 average
		credit.Held,    // clean, 1 of 3
		credit.Held,    // clean, 2 of 3
	}, verdicts)
	require.True(t, s.Tripped)
	require.Equal(t, money.Micros(100*cc), s.LastGood, "the rate stays at the last good value")

	verdicts, s = feed(b, 100*cc, 100*cc, 100*cc, 130*cc, 101*cc, 100*cc, 99*cc)
	require.Equal(t, credit.Recovered, verdicts[len(verdicts)-1], "third clean reading recovers")
	require.False(t, s.Tripped)
	require.Equal(t, money.Micros(99*cc), s.LastGood)
}

func TestBreakerDirtyReadingResetsRecovery(t *testing.T) {
	t.Parallel()
	var prices []money.Micros
	for range 10 {
		prices = append(prices, 100*cc)
	}
	prices = append(prices, 200*cc, 100*cc, 100*cc, 200*cc, 100*cc, 100*cc)
	verdicts, s := feed(credit.DefaultBreaker, prices...)
	require.Equal(t, []credit.Verdict{
		credit.Tripped,           // 200 against an average of 100
		credit.Held, credit.Held, // clean 1, 2
		credit.Held,              // dirty again: the count starts over
		credit.Held, credit.Held, // clean 1, 2
	}, verdicts[10:])
	require.True(t, s.Tripped)
	require.Equal(t, 2, s.Clean)
	require.Equal(t, money.Micros(100*cc), s.LastGood)
}

func TestBreakerBoundaryIsClean(t *testing.T) {
	t.Parallel()
	verdicts, _ := feed(credit.DefaultBreaker, 100*cc, 120*cc)
	require.Equal(t, credit.Accepted, verdicts[1], "exactly 20% is not more than 20%")
	verdicts, _ = feed(credit.DefaultBreaker, 100*cc, 120*cc+1)
	require.Equal(t, credit.Tripped, verdicts[1])
	verdicts, _ = feed(credit.DefaultBreaker, 100*cc, 80*cc-1)
	require.Equal(t, credit.Tripped, verdicts[1], "a drop trips too")
}

func TestBreakerLastingMoveRecovers(t *testing.T) {
	t.Parallel()
	// A real move from 100 to 150 that lasts: the 1-hour average follows
	// it (every reading counts), and the breaker closes again.
	prices := []money.Micros{100 * cc, 100 * cc}
	for range 30 {
		prices = append(prices, 150*cc)
	}
	verdicts, s := feed(credit.DefaultBreaker, prices...)
	require.Equal(t, credit.Tripped, verdicts[2])
	require.False(t, s.Tripped, "verdicts: %v", verdicts)
	require.Equal(t, money.Micros(150*cc), s.LastGood)
}

func TestMovingAverageWindow(t *testing.T) {
	t.Parallel()
	b := credit.DefaultBreaker
	now := t0.Add(2 * time.Hour)
	readings := []credit.Reading{
		{Price: 1000 * cc, At: now.Add(-61 * time.Minute)}, // outside
		{Price: 100 * cc, At: now.Add(-60 * time.Minute)},  // inside (window is inclusive at its start)
		{Price: 200 * cc, At: now.Add(-time.Minute)},
		{Price: 5000 * cc, At: now}, // not before now: excluded
	}
	avg, ok := b.MovingAverage(readings, now)
	require.True(t, ok)
	require.Equal(t, money.Micros(150*cc), avg)
	_, ok = b.MovingAverage(nil, now)
	require.False(t, ok)
}
