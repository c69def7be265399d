package ops

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// fakeLedger answers checks with a fixed state and records mode changes.
type fakeLedger struct {
	mu    sync.Mutex
	check monitor.Check
	sets  []string
}

func (f *fakeLedger) Check(context.Context) (monitor.Check, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.check, nil
}

func (f *fakeLedger) SetMode(_ context.Context, mode, _ string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets = append(f.sets, mode)
	f.check.Mode = mode
	return mode, nil
}

func TestOneMonitorLeaderAndFailover(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "ops", store.Migrations())
		l := &fakeLedger{check: monitor.Check{OutstandingCC: 10, ReserveRatio: 0.99, ChainValid: true, Mode: monitor.Normal}}
		// The lease lasts three intervals: long enough that a busy machine
		// (the race detector, parallel tests) delaying a's renewal by a few
		// hundred milliseconds does not hand b the lease, which is what
		// this test would then see as two leaders.
		const interval = 500 * time.Millisecond
		newReplica := func() *usecase.App {
			uc := usecase.New(db, repos, usecase.Config{Monitor: usecase.MonitorConfig{Ledger: l, Interval: interval}})
			t.Cleanup(uc.Close)
			return uc
		}
		a, b := newReplica(), newReplica()
		latestHolder := func() string {
			rec, err := sqlstore.NewChecks(db).Latest(context.Background())
			if err != nil {
				return ""
			}
			return rec.Holder
		}

		ctxA, stopA := context.WithCancel(context.Background())
		ctxB, stopB := context.WithCancel(context.Background())
		defer stopB()
		var wg sync.WaitGroup
		wg.Go(func() { runMonitor(ctxA, zap.NewNop(), a, "a", interval) })
		require.Eventually(t, func() bool { return latestHolder() == "a" }, 5*time.Second, 10*time.Millisecond, "a leads")
		wg.Go(func() { runMonitor(ctxB, zap.NewNop(), b, "b", interval) })
		time.Sleep(200 * time.Millisecond)
		require.Equal(t, "a", latestHolder(), "b does not check while a leads")

		stopA() // a stops cleanly and releases the lease
		require.Eventually(t, func() bool { return latestHolder() == "b" }, 5*time.Second, 10*time.Millisecond, "b takes over")
		stopB()
		wg.Wait()
		l.mu.Lock()
		defer l.mu.Unlock()
		require.Equal(t, []string{monitor.MintingPaused}, l.sets, "the short reserve was applied once")
	})
}
