package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestUsageIsRecordedAndPriced: a finished task's tokens and cost are
// kept; a cost not reported is estimated from the tokens at the model's
// price and stands in for a missing resource_cost; the metrics and the
// daily series sum them by model.
func TestUsageIsRecordedAndPriced(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine)
		spec := e.create(t, "spec", nil) // claude, strong: claude-opus-4-1 at $15/$75 a million
		require.Equal(t, "claude-opus-4-1", spec.Model)
		e.patch(t, spec.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		e.patch(t, spec.ID, usecase.Patch{TokensIn: ptr(int64(10000)), WorkerID: ptr("w1")})
		done := e.patch(t, spec.ID, usecase.Patch{Status: ptr("completed"), TokensOut: ptr(int64(2000)), WorkerID: ptr("w1")})
		require.Equal(t, int64(10000), *done.TokensIn)
		require.Equal(t, int64(2000), *done.TokensOut)
		require.Equal(t, 0.3, *done.CostUSD, "10k × $15/M + 2k × $75/M")
		require.Equal(t, 0.3, *done.ResourceCost, "the cost is the A/B's cost when none was given")

		impl := e.create(t, "impl", nil) // codex, balanced: gpt-5-codex
		e.patch(t, impl.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		reported := e.patch(t, impl.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("tests failed"), TokensIn: ptr(int64(1000)),
			TokensOut: ptr(int64(500)), CostUSD: ptr(0.02), ResourceCost: ptr(7.0), WorkerID: ptr("w1")})
		require.Equal(t, 0.02, *reported.CostUSD, "a reported cost is kept")
		require.Equal(t, 7.0, *reported.ResourceCost, "and so is a given resource_cost")

		silent := e.create(t, "test", nil)
		quiet := e.run(t, silent.ID, "completed", time.Second)
		require.Nil(t, quiet.CostUSD, "no usage reported, none recorded")
		require.Nil(t, quiet.ResourceCost)

		m, err := e.app.Metrics(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, usecase.Spent{Tasks: 2, TokensIn: 11000, TokensOut: 2500, CostUSD: 0.32}, m.Usage.Spent)
		require.Equal(t, map[string]usecase.Spent{
			"claude-opus-4-1": {Tasks: 1, TokensIn: 10000, TokensOut: 2000, CostUSD: 0.3},
			"gpt-5-codex":     {Tasks: 1, TokensIn: 1000, TokensOut: 500, CostUSD: 0.02},
		}, m.Usage.SpentByModel)
		days, err := e.app.DailyMetrics(ctx, ptr(int32(1)))
		require.NoError(t, err)
		require.Equal(t, usecase.Spent{Tasks: 2, TokensIn: 11000, TokensOut: 2500, CostUSD: 0.32}, days[0].Spent)

		for _, bad := range []usecase.Patch{{TokensIn: ptr(int64(-1))}, {TokensOut: ptr(int64(1) << 31)}, {CostUSD: ptr(-0.5)}} {
			_, err := e.app.Update(ctx, e.create(t, "spec", nil).ID, bad)
			requireKind(t, fault.Invalid, err)
		}
	})
}
