package monitor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// slowLedger is a ledger whose check can be made to outlive any timeout,
// as the ledger past about 2 million entries does.
type slowLedger struct {
	fakeLedger
	mu   sync.Mutex
	slow bool
}

func (s *slowLedger) setSlow(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow = v
}

func (s *slowLedger) Check(ctx context.Context) (monitor.Check, error) {
	s.mu.Lock()
	slow := s.slow
	s.mu.Unlock()
	if slow {
		<-ctx.Done()
		return monitor.Check{}, ctx.Err()
	}
	return s.fakeLedger.Check(ctx)
}

func (s *slowLedger) modes() []string {
	s.fakeLedger.mu.Lock()
	defer s.fakeLedger.mu.Unlock()
	return append([]string(nil), s.sets...)
}

// TestMonitorFailsClosed: a check that times out is recorded as failed,
// shown by Latest (so GET /api/health/coherence reports it), logged at
// error level, and the third in a row raises the economy to warning; the
// monitor lowers it again once a check completes, and never lowers a
// graver mode while it cannot see.
func TestMonitorFailsClosed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "ops", store.Migrations())
		fc := clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		l := &slowLedger{fakeLedger: fakeLedger{check: monitor.Check{OutstandingCC: 10, ReserveRatio: 1.2, ChainValid: true, Mode: monitor.Normal}}}
		core, logs := observer.New(zapcore.ErrorLevel)
		r := runner(db, l, fc, "a")
		r.Log, r.Timeout = zap.New(core), 20*time.Millisecond
		ctx := context.Background()
		step := func() (monitor.Record, error) {
			fc.Advance(30 * time.Second)
			return r.Once(ctx, true)
		}

		_, err := step()
		require.NoError(t, err)

		l.setSlow(true)
		for i := 1; i <= 2; i++ {
			rec, err := step()
			require.Error(t, err)
			require.Equal(t, i, rec.Failed)
			require.Equal(t, monitor.Unknown, rec.Decision.Mode)
			require.False(t, rec.Applied)
			got, source, err := r.Latest(ctx)
			require.NoError(t, err)
			require.Equal(t, "monitor", source, "the failed check is what the report shows")
			require.Equal(t, monitor.Unknown, got.Decision.Mode)
			require.Equal(t, 0, got.Decision.Score)
			require.Contains(t, got.Decision.Reasons[0], "timed out after 20ms")
			require.NotEmpty(t, got.Error)
		}
		require.Empty(t, l.modes(), "two failures are not escalated yet")

		rec, err := step()
		require.Error(t, err)
		require.Equal(t, 3, rec.Failed)
		require.Equal(t, monitor.Warning, rec.Decision.Mode)
		require.True(t, rec.Applied)
		require.Equal(t, []string{monitor.Warning}, l.modes(), "the third failure in a row raises warning")
		got, _, err := r.Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, monitor.Warning, got.Decision.Mode)
		require.Equal(t, []string{"the ledger could not be checked 3 times in a row (timed out after 20ms)"}, got.Decision.Reasons)

		rec, err = step()
		require.Error(t, err)
		require.Equal(t, 4, rec.Failed)
		require.False(t, rec.Applied, "already warning")
		require.Equal(t, []string{monitor.Warning}, l.modes())

		entries := logs.AllUntimed()
		require.Len(t, entries, 4, "every failed check is logged at error level")
		for _, e := range entries {
			require.Equal(t, zapcore.ErrorLevel, e.Level)
			require.Equal(t, "economy monitor: the ledger could not be checked", e.Message)
		}

		// The ledger answers again: the warning is lifted, the count restarts.
		l.setSlow(false)
		rec, err = step()
		require.NoError(t, err)
		require.Equal(t, monitor.Normal, rec.Decision.Mode)
		require.Equal(t, []string{monitor.Warning, monitor.Normal}, l.modes())
		l.setSlow(true)
		rec, err = step()
		require.Error(t, err)
		require.Equal(t, 1, rec.Failed)

		// A graver mode set after a completed check is never lowered to warning.
		l.setSlow(false)
		l.fakeLedger.mu.Lock()
		l.check.Mismatched = []string{"available:ada"}
		l.fakeLedger.mu.Unlock()
		_, err = step()
		require.NoError(t, err)
		require.Equal(t, []string{monitor.Warning, monitor.Normal, monitor.ReadOnly}, l.modes())
		l.setSlow(true)
		for range 3 {
			_, err = step()
			require.Error(t, err)
		}
		require.Equal(t, []string{monitor.Warning, monitor.Normal, monitor.ReadOnly}, l.modes(), "read_only stays")
	})
}

// TestLiveCheckThatTimesOutIsReported: with no recent record, the report
// runs a live check; when that times out it is returned as a failed check
// (the report says so) rather than an error, and nothing is applied.
func TestLiveCheckThatTimesOutIsReported(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "ops", store.Migrations())
		l := &slowLedger{slow: true}
		r := runner(db, l, clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)), "a")
		r.Timeout = 20 * time.Millisecond
		rec, source, err := r.Latest(context.Background())
		require.NoError(t, err)
		require.Equal(t, "live", source)
		require.Equal(t, monitor.Unknown, rec.Decision.Mode)
		require.NotEmpty(t, rec.Error)
		require.Empty(t, l.modes())
		_, err = sqlstore.NewChecks(db).Latest(context.Background())
		require.ErrorIs(t, err, monitor.ErrNoCheck, "a live check is not recorded")
	})
}
