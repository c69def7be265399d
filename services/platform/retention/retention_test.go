package retention_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/retention"
)

// rows is a table of row times that prunes as a repository would: at most
// batch of the oldest before the cut.
type rows struct {
	at    []time.Time
	calls int
	fail  error
}

func (r *rows) prune(_ context.Context, before time.Time, batch int) (int64, error) {
	r.calls++
	if r.fail != nil {
		return 0, r.fail
	}
	var kept []time.Time
	n := 0
	for _, t := range r.at {
		if t.Before(before) && n < batch {
			n++
			continue
		}
		kept = append(kept, t)
	}
	r.at = kept
	return int64(n), nil
}

// TestOncePrunesInBatchesUntilAShortOne: everything past the retention
// goes, a batch a call, and the last call is the one that came back
// short; what is younger stays.
func TestOncePrunesInBatchesUntilAShortOne(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	r := &rows{}
	for i := range 25 {
		r.at = append(r.at, now.Add(-48*time.Hour+time.Duration(i)*time.Minute))
	}
	r.at = append(r.at, now.Add(-time.Hour), now)
	ret := &retention.Retainer{What: "rows", Prune: r.prune, Retention: 24 * time.Hour, Batch: 10, Clock: clock.NewFake(now)}
	n, err := ret.Once(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(25), n)
	require.Equal(t, 3, r.calls, "10, 10, then 5: short, so done")
	require.Equal(t, []time.Time{now.Add(-time.Hour), now}, r.at)

	r.fail = errors.New("database down")
	_, err = ret.Once(context.Background())
	require.ErrorIs(t, err, r.fail)
}

// TestRunPrunesAtOnceThenOnEveryTick: against its clock, a row goes once
// it is older than the retention, and not before.
func TestRunPrunesAtOnceThenOnEveryTick(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	fc := clock.NewFake(now)
	r := &rows{at: []time.Time{now.Add(-25 * time.Hour), now.Add(-2 * time.Hour)}}
	done := make(chan int64, 100)
	ret := &retention.Retainer{What: "rows", Retention: 24 * time.Hour, Interval: 5 * time.Millisecond, Clock: fc,
		Prune: func(ctx context.Context, before time.Time, batch int) (int64, error) {
			n, err := r.prune(ctx, before, batch)
			done <- n
			return n, err
		}}
	ctx, stop := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		ret.Run(ctx)
	}()
	require.Equal(t, int64(1), <-done, "at once: the row past 24 h")
	fc.Advance(23 * time.Hour)
	require.Eventually(t, func() bool {
		select {
		case n := <-done:
			return n == 1
		default:
			return false
		}
	}, 10*time.Second, time.Millisecond, "a later tick prunes what aged past the retention since")
	stop()
	<-ended
	require.Empty(t, r.at)
}
