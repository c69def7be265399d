package usecase_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestGaugesReadTheEconomy: the economy's gauges follow its row, the audit
// queue and the last verification this process ran.
func TestGaugesReadTheEconomy(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()

		g, err := e.app.Gauges(ctx)
		require.NoError(t, err)
		require.Equal(t, usecase.ModeNormal, g.Supply.Mode)
		require.Zero(t, g.Supply.OutstandingCC)
		require.Zero(t, g.Backlog.Entries)
		require.Nil(t, g.Verified, "nothing verified yet")

		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		e.clock.Advance(2 * time.Second)
		g, err = e.app.Gauges(ctx)
		require.NoError(t, err)
		require.Equal(t, money.Micros(10*cc), g.Supply.TreasuryUSD)
		require.Positive(t, g.Supply.OutstandingCC)
		require.Positive(t, g.Backlog.Entries, "the deposit's entries wait for the sequencer")
		require.Equal(t, 2*time.Second, g.At.Sub(g.Backlog.Oldest))

		sequence(t, e.app)
		v, err := e.app.VerifyAudit(ctx, false)
		require.NoError(t, err)
		require.True(t, v.OK)
		g, err = e.app.Gauges(ctx)
		require.NoError(t, err)
		require.Zero(t, g.Backlog.Entries)
		require.NotNil(t, g.Verified)
		require.True(t, g.Verified.OK)
		require.Equal(t, v.LastVerified, g.Verified.LastVerified)
		require.Positive(t, g.Verified.LastVerified)
	})
}

// TestFreezesAreCounted: every change to frozen is counted once, after it
// committed, whoever made it; a refused freeze is not.
func TestFreezesAreCounted(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "ledger", store.Migrations())
		reg := prometheus.NewRegistry()
		app := usecase.New(db, repos, usecase.Config{Clock: clock.NewFake(t0), Ideas: ideas{},
			Signers: map[string]string{"ops": opsSecret}, Metrics: reg})
		ctx := context.Background()
		freezes := func(want string) {
			t.Helper()
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP foundry_ledger_freezes_total Changes of the economy to frozen this process made (a signer's freeze, or the monitor's mode).
# TYPE foundry_ledger_freezes_total counter
foundry_ledger_freezes_total `+want+"\n"), "foundry_ledger_freezes_total"))
		}
		freezes("0")

		_, err := app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(0), "drill"))
		require.NoError(t, err)
		freezes("1")
		_, err = app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(1), "again"))
		require.Error(t, err, "already frozen")
		freezes("1")

		_, err = app.Unfreeze(ctx, "", "admin")
		require.NoError(t, err)
		_, err = app.SetMode(ctx, usecase.ModeWarning, "a check failed", "monitor")
		require.NoError(t, err)
		freezes("1")
		m, err := app.SetMode(ctx, usecase.ModeFrozen, "the chain broke", "monitor")
		require.NoError(t, err)
		require.True(t, m.Changed)
		freezes("2")
		_, err = app.SetMode(ctx, usecase.ModeFrozen, "still broken", "monitor")
		require.NoError(t, err)
		freezes("2")
	})
}
