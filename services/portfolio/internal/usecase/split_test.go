package usecase_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// TestASplitParentIsNotCountedTwice: the portfolio totals counted a split
// parent's value beside its children's, which carry it; now the children
// carry it alone, and editing the parent later moves nothing.
func TestASplitParentIsNotCountedTwice(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		app := openApp(t, engine, usecase.Config{})
		op := idea.Editor{Operator: true, Actor: "admin"}
		totals := func() store.Totals {
			t.Helper()
			p, err := app.ListIdeas(ctx, usecase.ListQuery{})
			require.NoError(t, err)
			return p.Totals
		}
		parent, err := app.CreateIdea(ctx, op, idea.Draft{ID: "big", Name: "Big", PotentialValue: 90, EstimatedCost: 9})
		require.NoError(t, err)
		_, err = app.CreateIdea(ctx, op, idea.Draft{ID: "other", Name: "Other", PotentialValue: 10})
		require.NoError(t, err)
		require.Equal(t, 100.0, totals().PotentialValue)

		children, err := app.ProposeSplit(ctx, parent, []rightsizing.Child{{Name: "A"}, {Name: "B"}, {Name: "C"}})
		require.NoError(t, err)
		require.NoError(t, app.Split(ctx, parent.ID, children))
		got := totals()
		require.Equal(t, 100.0, got.PotentialValue, "the children's 3 × 30 and the other's 10: the parent's 90 not again")
		require.Equal(t, 5, got.Ideas, "the parent is still an idea")

		v := 500.0
		_, err = app.UpdateIdea(ctx, op, "big", idea.Patch{PotentialValue: &v})
		require.NoError(t, err)
		require.Equal(t, 100.0, totals().PotentialValue, "a split parent's own value is not counted")
	})
}
