package usecase_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// TestIdeasByStage: the use cases' own writes (create, advance, set a
// stage, merge) move the counts by stage, every stage answered.
func TestIdeasByStage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		app := openApp(t, engine, usecase.Config{})
		op := idea.Editor{Operator: true, Actor: "admin"}
		byStage := func() map[idea.Stage]int {
			t.Helper()
			got, err := app.IdeasByStage(ctx)
			require.NoError(t, err)
			return got
		}
		zero := map[idea.Stage]int{}
		for _, st := range idea.Stages {
			zero[st] = 0
		}
		require.Equal(t, zero, byStage(), "every stage, zeros included")

		for _, id := range []string{"a", "b", "c"} {
			_, err := app.CreateIdea(ctx, op, idea.Draft{ID: id, Name: "Idea " + id})
			require.NoError(t, err)
		}
		_, err := app.Advance(ctx, op, "a", "")
		require.NoError(t, err)
		_, err = app.SetStage(ctx, op, "b", "testing")
		require.NoError(t, err)
		want := map[idea.Stage]int{idea.None: 1, idea.Specced: 1, idea.Implementing: 0, idea.Testing: 1, idea.Reviewing: 0, idea.Complete: 0}
		require.Equal(t, want, byStage())

		_, err = app.Merge(ctx, "a", "b")
		require.NoError(t, err)
		want[idea.Testing] = 0
		require.Equal(t, want, byStage(), "the folded idea is archived: it leaves its stage")
	})
}
