package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// TestAnIdeaAnswersItsNewestImpact: the ledger's totals are kept with
// the idea and answered by its reads; totals no newer than the idea's
// (a push that crossed a later one on the way) change nothing; they are
// not an edit, so updated_at stays; malformed totals are refused.
func TestAnIdeaAnswersItsNewestImpact(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		app := openApp(t, engine, usecase.Config{})
		created, err := app.CreateIdea(ctx, idea.Editor{Operator: true, Actor: "admin"}, idea.Draft{ID: "kettle", Name: "Kettle",
			PotentialValue: 90, EstimatedCost: 9})
		require.NoError(t, err)
		require.Nil(t, created.Impact, "no record yet")

		at := time.Date(2026, 12, 1, 9, 30, 0, 123000, time.UTC)
		newer := idea.Impact{Version: 3, UsageRecords: 2, RevenueRecords: 1, EarnedMicros: 120_000_000, RevenueMicros: 100_000_000,
			PaidMicros: 9_950_000_000, LastAt: at}
		applied, err := app.SetImpact(ctx, usecase.ImpactCmd{IdeaID: "kettle", Impact: newer})
		require.NoError(t, err)
		require.True(t, applied)
		older := idea.Impact{Version: 2, UsageRecords: 2, EarnedMicros: 120_000_000, LastAt: at.Add(-time.Hour)}
		applied, err = app.SetImpact(ctx, usecase.ImpactCmd{IdeaID: "kettle", Impact: older})
		require.NoError(t, err)
		require.False(t, applied, "an older push landing late is ignored")
		applied, err = app.SetImpact(ctx, usecase.ImpactCmd{IdeaID: "kettle", Impact: newer})
		require.NoError(t, err)
		require.False(t, applied, "the same version again changes nothing")

		got, err := app.Idea(ctx, "kettle")
		require.NoError(t, err)
		require.Equal(t, &newer, got.Impact, "every field round-trips")
		require.Equal(t, created.UpdatedAt, got.UpdatedAt, "the ledger's totals are not an edit")
		list, err := app.ListIdeas(ctx, usecase.ListQuery{})
		require.NoError(t, err)
		require.Len(t, list.Ideas, 1)
		require.Equal(t, &newer, list.Ideas[0].Impact, "the list answers it too")

		_, err = app.SetImpact(ctx, usecase.ImpactCmd{IdeaID: "nope", Impact: newer})
		require.Equal(t, fault.NotFound, fault.KindOf(err))
		bad := newer
		bad.Version = 4 // not usage + revenue
		_, err = app.SetImpact(ctx, usecase.ImpactCmd{IdeaID: "kettle", Impact: bad})
		require.Equal(t, fault.Invalid, fault.KindOf(err))
		require.ErrorContains(t, err, "version")
	})
}
