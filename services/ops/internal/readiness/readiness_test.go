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
	hang := make(chan struct{})
	defer close(hang)
	probes := []readiness.Probe{
		{Name: "db", Check: func(context.Context) error { return nil }},
		{Name: "ledger", Check: func(context.Context) error { return errors.New("unreachable") }},
		{Name: "stubborn", Check: func(context.Context) error { <-hang; return nil }}, // ignores its context
		{Name: "slow", Check: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }},
		{Name: "telemetry", Optional: true, Check: func(context.Context) error { return errors.New("not answering") }},
	}
	results := readiness.Run(context.Background(), probes, 50*time.Millisecond)
	require.Equal(t, []readiness.Result{
		{Name: "db", OK: true},
		{Name: "ledger", Detail: "unreachable"},
		{Name: "stubborn", Detail: "timed out"},
		{Name: "slow", Detail: "timed out"},
		{Name: "telemetry", Optional: true, Detail: "not answering"},
	}, results)
	require.Equal(t, "ledger: unreachable; stubborn: timed out; slow: timed out", readiness.Failing(results), "optional parts never fail the verdict")
}

func TestFailingWhenAllPass(t *testing.T) {
	t.Parallel()
	results := readiness.Run(context.Background(), []readiness.Probe{
		{Name: "db", Check: func(context.Context) error { return nil }},
	}, time.Second)
	require.Equal(t, []readiness.Result{{Name: "db", OK: true}}, results)
	require.Empty(t, readiness.Failing(results))
}
