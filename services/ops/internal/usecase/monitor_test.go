package usecase_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// fakeLedger answers checks with a settable state and records mode changes.
type fakeLedger struct {
	mu    sync.Mutex
	check monitor.Check
	err   error
	sets  []string
}

func (f *fakeLedger) Check(context.Context) (monitor.Check, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.check, f.err
}

func (f *fakeLedger) SetMode(_ context.Context, mode, _ string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets = append(f.sets, mode)
	f.check.Mode = mode
	return mode, nil
}

func (f *fakeLedger) modes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sets...)
}

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

// monitorStart is the monitor tests' clock's starting time.
var monitorStart = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// monitorEnv returns the use cases with the economy monitor over l, every
// 30 s, on a fake clock.
func monitorEnv(t *testing.T, engine database.Engine, l usecase.Ledger, cfg usecase.Config) (env, *clock.Fake) {
	t.Helper()
	fc := clock.NewFake(monitorStart)
	cfg.Clock = fc
	cfg.Monitor.Ledger, cfg.Monitor.Interval = l, 30*time.Second
	return setup(t, engine, cfg), fc
}

// latestRecorded is the newest check in the store.
func latestRecorded(t *testing.T, db *database.DB) (monitor.Record, error) {
	t.Helper()
	return sqlstore.NewChecks(db).Latest(context.Background())
}

func TestCheckEconomyAppliesAndRecords(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		l := &fakeLedger{check: monitor.Check{OutstandingCC: 10, ReserveRatio: 1.2, ChainValid: true, Mode: monitor.Normal}}
		e, fc := monitorEnv(t, engine, l, usecase.Config{})
		ctx := context.Background()

		res, err := e.app.Coherence(ctx)
		require.NoError(t, err)
		require.Equal(t, "live", res.Source, "no check yet: one runs now")
		require.Equal(t, 30*time.Second, res.Interval)
		require.Empty(t, l.modes(), "a live check changes nothing")

		rec, err := e.app.CheckEconomy(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, monitor.Normal, rec.Decision.Mode)
		require.False(t, rec.Applied)

		l.mu.Lock()
		l.check.ChainValid, l.check.FirstDivergent, l.check.ChainReason = false, 4, "hash does not match the entry"
		l.mu.Unlock()
		fc.Advance(30 * time.Second)
		rec, err = e.app.CheckEconomy(ctx, "a")
		require.NoError(t, err)
		require.True(t, rec.Applied)
		require.Equal(t, []string{monitor.ReadOnly}, l.modes(), "a chain break stops every movement")

		res, err = e.app.Coherence(ctx)
		require.NoError(t, err)
		require.Equal(t, "monitor", res.Source)
		got := res.Check
		require.Equal(t, monitor.ReadOnly, got.Decision.Mode)
		require.Equal(t, 4, got.Check.FirstDivergent)
		require.False(t, got.Check.ChainValid)
		require.Equal(t, []string{"audit chain broken at seq 4 (hash does not match the entry)"}, got.Decision.Reasons)

		// Repaired: the monitor lowers its own mode again.
		l.mu.Lock()
		l.check.ChainValid = true
		l.mu.Unlock()
		fc.Advance(30 * time.Second)
		rec, err = e.app.CheckEconomy(ctx, "a")
		require.NoError(t, err)
		require.True(t, rec.Applied)
		require.Equal(t, []string{monitor.ReadOnly, monitor.Normal}, l.modes())

		// A freeze, a signer's or a finding's, the monitor never lifts,
		// and never calls normal.
		l.mu.Lock()
		l.check.Mode = monitor.Frozen
		l.mu.Unlock()
		fc.Advance(30 * time.Second)
		rec, err = e.app.CheckEconomy(ctx, "a")
		require.NoError(t, err)
		require.False(t, rec.Applied)
		require.Equal(t, monitor.Frozen, rec.Decision.Mode)
		require.Equal(t, []string{monitor.ReadOnly, monitor.Normal}, l.modes())

		fc.Advance(2 * time.Minute)
		res, err = e.app.Coherence(ctx)
		require.NoError(t, err)
		require.Equal(t, "live", res.Source, "the last check is older than two intervals")

		l.mu.Lock()
		l.err = errors.New("ledger down")
		l.mu.Unlock()
		_, err = e.app.CheckEconomy(ctx, "a")
		require.ErrorIs(t, err, usecase.ErrCheckFailed)
		latest, err := latestRecorded(t, e.db)
		require.NoError(t, err)
		require.Equal(t, "ledger down", latest.Error, "a failed check is recorded too")
	})
}

// TestMonitorFailsClosed: a check that times out is recorded as failed,
// shown by Coherence (so GET /api/health/coherence reports it), logged at
// error level, and the third in a row raises the economy to warning; the
// monitor lowers it again once a check completes, and never lowers a
// graver mode while it cannot see.
func TestMonitorFailsClosed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		l := &slowLedger{fakeLedger: fakeLedger{check: monitor.Check{OutstandingCC: 10, ReserveRatio: 1.2, ChainValid: true, Mode: monitor.Normal}}}
		core, logs := observer.New(zapcore.ErrorLevel)
		e, fc := monitorEnv(t, engine, l, usecase.Config{Log: zap.New(core), Monitor: usecase.MonitorConfig{Timeout: 20 * time.Millisecond}})
		ctx := context.Background()
		step := func() (monitor.Record, error) {
			fc.Advance(30 * time.Second)
			return e.app.CheckEconomy(ctx, "a")
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
			res, err := e.app.Coherence(ctx)
			require.NoError(t, err)
			require.Equal(t, "monitor", res.Source, "the failed check is what the report shows")
			got := res.Check
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
		res, err := e.app.Coherence(ctx)
		require.NoError(t, err)
		require.Equal(t, monitor.Warning, res.Check.Decision.Mode)
		require.Equal(t, []string{"the ledger could not be checked 3 times in a row (timed out after 20ms)"}, res.Check.Decision.Reasons)

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
		l := &slowLedger{slow: true}
		e, _ := monitorEnv(t, engine, l, usecase.Config{Monitor: usecase.MonitorConfig{Timeout: 20 * time.Millisecond}})
		res, err := e.app.Coherence(context.Background())
		require.NoError(t, err)
		require.Equal(t, "live", res.Source)
		require.Equal(t, monitor.Unknown, res.Check.Decision.Mode)
		require.NotEmpty(t, res.Check.Error)
		require.Empty(t, l.modes())
		_, err = latestRecorded(t, e.db)
		require.ErrorIs(t, err, store.ErrNotFound, "a live check is not recorded")
	})
}

func TestOldChecksArePrunedAsChecksAreRecorded(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		l := &fakeLedger{check: monitor.Check{ChainValid: true, Mode: monitor.Normal}}
		e, _ := monitorEnv(t, engine, l, usecase.Config{})
		ctx := context.Background()
		old := monitor.Record{ID: uuid.NewString(), CheckedAt: monitorStart.Add(-usecase.MonitorRetention - time.Minute), Holder: "a"}
		require.NoError(t, sqlstore.NewChecks(e.db).Insert(ctx, old))
		kept := old
		kept.ID, kept.CheckedAt = uuid.NewString(), monitorStart.Add(-usecase.MonitorRetention+time.Minute)
		require.NoError(t, sqlstore.NewChecks(e.db).Insert(ctx, kept))

		_, err := e.app.CheckEconomy(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, 2, e.count(t, "monitor_checks"), "the check older than the retention went in the same transaction")
	})
}

func TestCoherenceWithoutTheMonitor(t *testing.T) {
	t.Parallel()
	e := setup(t, database.SQLite, usecase.Config{})
	_, err := e.app.Coherence(context.Background())
	require.Equal(t, fault.Unavailable, fault.KindOf(err))
}

func TestMonitorLease(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, usecase.Config{})
		ctx := context.Background()
		ok, err := e.app.LeadMonitor(ctx, "a", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = e.app.LeadMonitor(ctx, "b", time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "a leads")
		require.NoError(t, e.app.ReleaseMonitor(ctx, "a"))
		ok, err = e.app.LeadMonitor(ctx, "b", time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "released: b takes over at once")
	})
}
