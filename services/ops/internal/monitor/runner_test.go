package monitor_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
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

func runner(db *database.DB, l monitor.Ledger, c clock.Clock, holder string) *monitor.Runner {
	return &monitor.Runner{
		DB: db, Recorder: func(q database.Querier) monitor.Recorder { return sqlstore.NewChecks(q) },
		Ledger: l, Holder: holder, Interval: 30 * time.Second, Clock: c, NewID: uuid.NewString, Log: zap.NewNop(),
	}
}

func TestRunnerAppliesAndRecords(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "ops", store.Migrations())
		fc := clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
		l := &fakeLedger{check: monitor.Check{OutstandingCC: 10, ReserveRatio: 1.2, ChainValid: true, Mode: monitor.Normal}}
		r := runner(db, l, fc, "a")
		ctx := context.Background()

		_, source, err := r.Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, "live", source, "no check yet: one runs now")
		require.Empty(t, l.sets, "a live check changes nothing")

		rec, err := r.Once(ctx, true)
		require.NoError(t, err)
		require.Equal(t, monitor.Normal, rec.Decision.Mode)
		require.False(t, rec.Applied)

		l.check.ChainValid, l.check.FirstDivergent, l.check.ChainReason = false, 4, "hash does not match the entry"
		fc.Advance(30 * time.Second)
		rec, err = r.Once(ctx, true)
		require.NoError(t, err)
		require.True(t, rec.Applied)
		require.Equal(t, []string{monitor.Frozen}, l.sets, "a chain break freezes")

		got, source, err := r.Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, "monitor", source)
		require.Equal(t, monitor.Frozen, got.Decision.Mode)
		require.Equal(t, 4, got.Check.FirstDivergent)
		require.False(t, got.Check.ChainValid)
		require.Equal(t, []string{"audit chain broken at seq 4 (hash does not match the entry)"}, got.Decision.Reasons)

		// Repaired by a person but still frozen: the monitor never unfreezes.
		l.check.ChainValid = true
		fc.Advance(30 * time.Second)
		rec, err = r.Once(ctx, true)
		require.NoError(t, err)
		require.False(t, rec.Applied)
		require.Equal(t, []string{monitor.Frozen}, l.sets)

		fc.Advance(2 * time.Minute)
		_, source, err = r.Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, "live", source, "the last check is older than two intervals")

		l.err = errors.New("ledger down")
		_, err = r.Once(ctx, true)
		require.Error(t, err)
		latest, err := sqlstore.NewChecks(db).Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, "ledger down", latest.Error, "a failed check is recorded too")
	})
}

func TestOneLeaderAndFailover(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "ops", store.Migrations())
		l := &fakeLedger{check: monitor.Check{OutstandingCC: 10, ReserveRatio: 0.99, ChainValid: true, Mode: monitor.Normal}}
		a := runner(db, l, clock.Real{}, "a")
		b := runner(db, l, clock.Real{}, "b")
		// The lease lasts three intervals: long enough that a busy machine
		// (the race detector, parallel tests) delaying a's renewal by a few
		// hundred milliseconds does not hand b the lease, which is what
		// this test would then see as two leaders.
		a.Interval, b.Interval = 500*time.Millisecond, 500*time.Millisecond

		ctxA, stopA := context.WithCancel(context.Background())
		ctxB, stopB := context.WithCancel(context.Background())
		defer stopB()
		var wg sync.WaitGroup
		wg.Go(func() { a.Run(ctxA) })
		require.Eventually(t, func() bool {
			rec, err := sqlstore.NewChecks(db).Latest(context.Background())
			return err == nil && rec.Holder == "a"
		}, 5*time.Second, 10*time.Millisecond, "a leads")
		wg.Go(func() { b.Run(ctxB) })
		time.Sleep(200 * time.Millisecond)
		rec, err := sqlstore.NewChecks(db).Latest(context.Background())
		require.NoError(t, err)
		require.Equal(t, "a", rec.Holder, "b does not check while a leads")

		stopA() // a stops cleanly and releases the lease
		require.Eventually(t, func() bool {
			rec, err := sqlstore.NewChecks(db).Latest(context.Background())
			return err == nil && rec.Holder == "b"
		}, 5*time.Second, 10*time.Millisecond, "b takes over")
		stopB()
		wg.Wait()
		require.Equal(t, []string{monitor.Warning}, l.sets, "the short reserve was applied once")
	})
}
