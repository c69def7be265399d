package usecase_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestLatestCheck: the metrics read the monitor's newest recorded check,
// completed or not; a live check (Coherence) is not recorded.
func TestLatestCheck(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		l := &fakeLedger{check: monitor.Check{OutstandingCC: 10, ReserveRatio: 1.2, ChainValid: true, Mode: monitor.Normal}}
		e, fc := monitorEnv(t, engine, l, usecase.Config{})
		ctx := context.Background()

		_, ok, err := e.app.LatestCheck(ctx)
		require.NoError(t, err)
		require.False(t, ok, "no check yet")
		_, err = e.app.Coherence(ctx)
		require.NoError(t, err)
		_, ok, err = e.app.LatestCheck(ctx)
		require.NoError(t, err)
		require.False(t, ok, "a live check is not the monitor's")

		_, err = e.app.CheckEconomy(ctx, "a")
		require.NoError(t, err)
		rec, ok, err := e.app.LatestCheck(ctx)
		require.NoError(t, err)
		require.True(t, ok)
		require.Empty(t, rec.Error)
		require.Equal(t, monitorStart, rec.CheckedAt)

		l.mu.Lock()
		l.err = errors.New("ledger unreachable")
		l.mu.Unlock()
		fc.Advance(30 * time.Second)
		_, err = e.app.CheckEconomy(ctx, "a")
		require.ErrorIs(t, err, usecase.ErrCheckFailed)
		rec, ok, err = e.app.LatestCheck(ctx)
		require.NoError(t, err)
		require.True(t, ok)
		require.Contains(t, rec.Error, "ledger unreachable")
		require.Equal(t, monitorStart.Add(30*time.Second), rec.CheckedAt)
	})
}
