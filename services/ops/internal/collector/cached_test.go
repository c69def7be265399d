package collector_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/collector"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/clock"
)

// counting is a provider that counts its calls and answers after a gate.
type counting struct {
	calls atomic.Int32
	gate  chan struct{}
	err   error
}

func (c *counting) Family() string { return usage.OpenAI }

func (c *counting) Collect(ctx context.Context) ([]usage.Snapshot, error) {
	c.calls.Add(1)
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	return []usage.Snapshot{{Provider: "openai"}}, nil
}

func TestCachedCollapsesConcurrentCallsAndHonoursTheTTL(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	p := &counting{gate: make(chan struct{})}
	c := collector.NewCached(p, 30*time.Second, fc)

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			snaps, err := c.Collect(context.Background())
			if err == nil && len(snaps) != 1 {
				err = errors.New("want one snapshot")
			}
			errs <- err
		})
	}
	require.Eventually(t, func() bool { return p.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond) // let the other 19 join the call
	close(p.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, int32(1), p.calls.Load(), "20 concurrent requests, one provider call")

	_, err := c.Collect(context.Background())
	require.NoError(t, err)
	require.Equal(t, int32(1), p.calls.Load(), "within the TTL: the cache answers")

	fc.Advance(31 * time.Second)
	_, err = c.Collect(context.Background())
	require.NoError(t, err)
	require.Equal(t, int32(2), p.calls.Load(), "after the TTL: one new call")
}

func TestCachedCallOutlivesAnImpatientRequest(t *testing.T) {
	t.Parallel()
	p := &counting{gate: make(chan struct{})}
	c := collector.NewCached(p, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Collect(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the request gives up at its budget")
	close(p.gate) // the provider answers late
	require.Eventually(t, func() bool {
		snaps, err := c.Collect(context.Background())
		return err == nil && len(snaps) == 1
	}, 5*time.Second, time.Millisecond)
	require.Equal(t, int32(1), p.calls.Load(), "the late answer filled the cache")
}

func TestCachedDoesNotCacheFailures(t *testing.T) {
	t.Parallel()
	p := &counting{err: errors.New("500")}
	c := collector.NewCached(p, time.Minute, nil)
	_, err := c.Collect(context.Background())
	require.Error(t, err)
	_, err = c.Collect(context.Background())
	require.Error(t, err)
	require.Equal(t, int32(2), p.calls.Load())
}
