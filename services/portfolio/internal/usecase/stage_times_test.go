package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// TestStageTimes walks ideas through their stages on a fake clock and
// checks the stage times the use cases' own stage changes give: each
// stage's stints, median and p90, over the default window and a short one.
func TestStageTimes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		fc := clock.NewFake(t0)
		app := openApp(t, engine, usecase.Config{Clock: fc})
		op := idea.Editor{Operator: true, Actor: "admin"}
		create := func(id string) {
			_, err := app.CreateIdea(ctx, op, idea.Draft{ID: id, Name: "Idea " + id})
			require.NoError(t, err)
		}
		advance := func(id string) {
			_, err := app.Advance(ctx, op, id, "")
			require.NoError(t, err)
		}

		create("a")
		fc.Advance(10 * time.Minute)
		advance("a") // none: 10m
		fc.Advance(50 * time.Minute)
		advance("a") // specced: 50m
		create("b")
		fc.Advance(20 * time.Minute)
		advance("b") // none: 20m
		fc.Advance(40 * time.Minute)
		_, err := app.SetStage(ctx, op, "b", "testing") // specced: 40m
		require.NoError(t, err)

		got, err := app.StageTimes(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, usecase.StageTimesResult{
			Stages: []idea.StageTime{
				{Stage: idea.None, Stints: 2, Median: 15 * time.Minute, P90: 20 * time.Minute},
				{Stage: idea.Specced, Stints: 2, Median: 45 * time.Minute, P90: 50 * time.Minute},
				{Stage: idea.Implementing}, {Stage: idea.Testing}, {Stage: idea.Reviewing}, {Stage: idea.Complete},
			},
			Since: t0.Add(2*time.Hour - 90*24*time.Hour),
			Days:  90,
		}, got, "the default window is 90 days; a stage nobody left has no stint")

		fc.Advance(48 * time.Hour)
		advance("a") // implementing: since T0+1h, 49h
		day := int32(1)
		got, err = app.StageTimes(ctx, &day)
		require.NoError(t, err)
		require.Equal(t, usecase.StageTimesResult{
			Stages: []idea.StageTime{
				{Stage: idea.None}, {Stage: idea.Specced},
				{Stage: idea.Implementing, Stints: 1, Median: 49 * time.Hour, P90: 49 * time.Hour},
				{Stage: idea.Testing}, {Stage: idea.Reviewing}, {Stage: idea.Complete},
			},
			Since: t0.Add(2*time.Hour + 48*time.Hour - 24*time.Hour),
			Days:  1,
		}, got, "a stint counts in the window it ended in, however long ago it began")

		for _, bad := range []int32{0, -1, 366} {
			_, err := app.StageTimes(ctx, &bad)
			fe, ok := fault.As(err)
			require.True(t, ok, "days %d: %v", bad, err)
			require.Equal(t, fault.Invalid, fe.Kind)
			require.Equal(t, "days", fe.Fields[0].Field)
			require.Len(t, fe.Fields, 1)
		}
	})
}
