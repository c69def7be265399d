package periodic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/periodic"
)

func TestRunCallsAtOnceThenEveryInterval(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		periodic.Run(ctx, time.Millisecond, func() {
			if n.Add(1) == 3 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	require.Equal(t, int32(3), n.Load(), "no call starts after the context ended")
}

func TestRunWithoutAnIntervalRunsOnce(t *testing.T) {
	var n int
	periodic.Run(context.Background(), 0, func() { n++ })
	require.Equal(t, 1, n)
}

func TestAfterWaitsOneIntervalFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var n int
	periodic.After(ctx, time.Hour, func() { n++ })
	require.Equal(t, 0, n, "an ended context before the first tick: no call")

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	calls := make(chan struct{}, 1)
	go periodic.After(ctx, time.Millisecond, func() {
		select {
		case calls <- struct{}{}:
		default:
		}
	})
	select {
	case <-calls:
	case <-time.After(10 * time.Second):
		t.Fatal("After never called fn")
	}
}
