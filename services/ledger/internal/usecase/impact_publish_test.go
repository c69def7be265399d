package usecase_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// board is a portfolio that shows impact totals, or is down.
type board struct {
	mu    sync.Mutex
	down  bool
	shown map[string]shownImpact
	calls int
}

type shownImpact struct {
	version int64
	totals  store.ImpactTotals
}

func (b *board) SetImpact(_ context.Context, ideaID string, version int64, t store.ImpactTotals) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.down {
		return fault.New(fault.Unavailable, "the portfolio is not reachable")
	}
	if b.shown == nil {
		b.shown = map[string]shownImpact{}
	}
	if version > b.shown[ideaID].version {
		b.shown[ideaID] = shownImpact{version, t}
	}
	return nil
}

func (b *board) show(ideaID string) shownImpact {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.shown[ideaID]
}

func (b *board) setDown(down bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down = down
}

// TestImpactReachesTheIdea: each record tells the portfolio its idea's
// totals as it commits; while the portfolio is down the records still
// commit and their notices wait, and the publisher's next round tells
// the newest totals and clears them; a replayed record pushes nothing.
func TestImpactReachesTheIdea(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "ledger", store.Migrations())
		b := &board{}
		app := usecase.New(db, repos, usecase.Config{Ideas: ideas{}, Board: b, AuditSigner: testSigner})
		e := env{app: app, db: db}
		require.NoError(t, app.Register(ctx, store.Contributor{ID: "ada", Handle: "ada", TrustLevel: "tofu", CreatedAt: t0},
			store.Session{TokenHash: "hash-ada", CreatedAt: t0}))
		_, err := app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 20, Reference: "r-ada"}, nil)
		require.NoError(t, err)
		_, err = app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: 1000}, nil)
		require.NoError(t, err)

		usage(t, e, "week-1", 10*cc)
		got := b.show("idea-1")
		require.Equal(t, int64(1), got.version, "told as the record committed")
		require.Equal(t, 1, got.totals.UsageRecords)
		require.Equal(t, money.Micros(100*cc), got.totals.EarnedCC, "1 % of 1 000 CC per unit, 10 units")

		b.setDown(true)
		usage(t, e, "week-2", 2*cc)
		_, err = app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "idea-1", Kind: impact.KindRevenue, Reference: "invoice-1",
			AmountUSD: 10, Evidence: "invoice 1", Actor: "admin"}, nil)
		require.NoError(t, err, "a portfolio that is down does not fail a record")
		require.Equal(t, int64(1), b.show("idea-1").version, "nothing reached it")
		_, err = app.PublishImpact(ctx, usecase.ImpactPublishBatch)
		require.Equal(t, fault.Unavailable, fault.KindOf(err), "the publisher says why: %v", err)

		b.setDown(false)
		n, err := app.PublishImpact(ctx, usecase.ImpactPublishBatch)
		require.NoError(t, err)
		require.Equal(t, 1, n, "one idea, however many records it waited with")
		got = b.show("idea-1")
		require.Equal(t, int64(3), got.version)
		require.Equal(t, 2, got.totals.UsageRecords)
		require.Equal(t, 1, got.totals.RevenueRecords)
		require.Equal(t, money.Micros(10*cc), got.totals.RevenueUSD)
		require.Equal(t, money.Micros(995*cc), got.totals.PaidCC, "10 USD at the buy rate")
		n, err = app.PublishImpact(ctx, usecase.ImpactPublishBatch)
		require.NoError(t, err)
		require.Zero(t, n, "the notices were cleared")

		calls := b.calls
		usage(t, e, "week-1", 10*cc) // a replay: the same record
		require.Equal(t, calls, b.calls, "a replay changes nothing, so it tells nothing")
	})
}
