package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/storetest"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// ledgerGrowing are the ledger's tables that grow with its history.
var ledgerGrowing = []string{"contributors", "sessions", "assets", "contributions", "github_deliveries",
	"distributions", "payouts", "github_commits", "cc_accounts", "cc_entries", "cc_lines", "cc_deposits",
	"cc_cooling", "cc_pledges", "idempotency_keys", "audit_entries", "oracle_readings", "incidents",
	"audit_tree", "supply_days", "audit_findings", "impact_records", "cc_attributions", "impact_notices",
	"github_bodies"}

// TestPolledRoutesReadIndexRanges: every statement the public routes the
// dashboard polls or reads send (the incident status, its incidents, the
// audit log, the supply and its history, contributors, contributions,
// assets, the exchange rate, and the monitor's coherence check) reads the tables that
// grow with history by ranges of their indexes, in the generic plan
// Postgres caches for it (dbtest.RequireIndexReads): no route's cost grows
// with the ledger's age. (The totals of incidents, contributors,
// contributions and assets were counts of their whole tables.)
func TestPolledRoutesReadIndexRanges(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.Postgres, "ledger", store.Migrations())
	var rec dbtest.Recording
	fc := clock.NewFake(t0)
	app := usecase.New(db, func(q database.Querier) usecase.Repos { return repos(rec.Wrap(q)) },
		usecase.Config{Clock: fc, Ideas: ideas{}, Signers: map[string]string{"ops": opsSecret}, AuditSigner: testSigner})
	ctx := context.Background()
	for _, c := range []string{"ada", "bob"} {
		require.NoError(t, app.Register(ctx, store.Contributor{ID: c, Handle: c, TrustLevel: "tofu", CreatedAt: t0},
			store.Session{TokenHash: "hash-" + c, CreatedAt: t0}))
	}
	deposits(t, app, "", 3)
	sequence(t, app)
	_, err := app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(0), "drill"))
	require.NoError(t, err)
	_, err = app.Unfreeze(ctx, "drill over", "admin")
	require.NoError(t, err)
	asset, err := app.CreateAsset(ctx, usecase.CreateAssetCmd{Type: attribution.TypeCode, Name: "asset", Description: "d"})
	require.NoError(t, err)
	for k := range 2 {
		c := storetest.NewContribution("ada", asset.ID, money.Scale, t0.Add(time.Duration(k)*time.Second))
		_, err := app.AddContribution(ctx, c, storetest.Implicit("ada", t0), nil)
		require.NoError(t, err)
	}
	_, err = db.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)

	days := int32(30)
	dbtest.RequireCallsReadIndexRanges(t, db, &rec, map[string]func() error{
		"GET /api/incidents/status (and the monitor's check)": func() error { _, err := app.CheckCoherence(ctx); return err },
		"GET /api/incidents": func() error { _, err := app.Incidents(ctx, usecase.Page{}); return err },
		"GET /api/audit":     func() error { _, err := app.AuditPage(ctx, usecase.Page{}); return err },
		"GET /api/cc/supply": func() error { _, err := app.Supply(ctx); return err },
		"GET /api/cc/supply/history": func() error {
			_, err := app.SupplyHistory(ctx, &days)
			return err
		},
		"GET /api/contributors":     func() error { _, err := app.ListContributors(ctx, "", usecase.Page{}); return err },
		"GET /api/cc/exchange-rate": func() error { _, err := app.ExchangeRate(ctx); return err },
		"GET /api/contributions": func() error {
			_, err := app.ListContributions(ctx, usecase.ListContributionsCmd{})
			return err
		},
		"GET /api/assets/{id}/contributions": func() error {
			_, err := app.ListContributions(ctx, usecase.ListContributionsCmd{AssetID: "asset-1"})
			return err
		},
		"GET /api/assets": func() error { _, err := app.ListAssets(ctx, usecase.Page{}); return err },
		"GET /api/incidents?cursor=": func() error {
			one := int32(1)
			first, err := app.Incidents(ctx, usecase.Page{Limit: &one})
			if err == nil {
				_, err = app.Incidents(ctx, usecase.Page{Limit: &one, Cursor: first.Next})
			}
			return err
		},
		"GET /api/contributions?cursor=": func() error {
			one := int32(1)
			first, err := app.ListContributions(ctx, usecase.ListContributionsCmd{Page: usecase.Page{Limit: &one}})
			if err == nil {
				_, err = app.ListContributions(ctx, usecase.ListContributionsCmd{Page: usecase.Page{Limit: &one, Cursor: first.Next}})
			}
			return err
		},
	}, ledgerGrowing...)
}
