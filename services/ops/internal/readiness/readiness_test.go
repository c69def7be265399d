package readiness_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/readiness"
)

func TestRun(t *testing.T) {
	t.Parallel()
	probes := []readiness.Probe{
		{Name: "database", Check: func(context.Context) error { return nil }},
		{Name: "ledger", Check: func(context.Context) error { return errors.New("not serving") }},
		{Name: "slow", Check: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }},
	}
	start := time.Now()
	got := readiness.Run(context.Background(), probes, 50*time.Millisecond)
	require.Less(t, time.Since(start), 5*time.Second, "a stalled probe is cut off by its timeout")
	require.Equal(t, []readiness.Result{
		{Name: "database", OK: true},
		{Name: "ledger", OK: false, Detail: "not serving"},
		{Name: "slow", OK: false, Detail: "context deadline exceeded"},
	}, got)
	require.Equal(t, "ledger: not serving; slow: context deadline exceeded", readiness.Failing(got))
	require.Empty(t, readiness.Failing(got[:1]))
}
