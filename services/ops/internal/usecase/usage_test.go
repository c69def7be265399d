package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

func TestUsageHistoryIsTrimmed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, usecase.Config{})
		ctx := context.Background()
		start := t0.Add(-24 * time.Hour)
		const n = usecase.SnapshotsKept + 5
		for i := range n {
			_, err := e.app.IngestUsageSnapshot(ctx, usecase.IngestUsageCmd{
				Provider: "openai", CollectedAt: start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
				Metrics: []usage.Metric{{Name: "m", Value: float64(i)}},
			})
			require.NoError(t, err)
		}
		_, err := e.app.IngestUsageSnapshot(ctx, usecase.IngestUsageCmd{Provider: "claude", Metrics: []usage.Metric{{Name: "m"}}})
		require.NoError(t, err)

		var kept int
		var oldest int64
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*), MIN(collected_at) FROM usage_snapshots WHERE provider = 'openai'`).Scan(&kept, &oldest))
		require.Equal(t, usecase.SnapshotsKept, kept)
		require.Equal(t, start.Add(5*time.Minute).UnixMicro(), oldest, "the oldest were deleted")
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM usage_snapshots WHERE provider = 'claude'`).Scan(&kept))
		require.Equal(t, 1, kept, "trimming is per provider")
	})
}

func TestIngestIsValidatedWhole(t *testing.T) {
	t.Parallel()
	e := setup(t, database.SQLite, usecase.Config{})
	_, err := e.app.IngestUsageSnapshot(context.Background(), usecase.IngestUsageCmd{
		Provider: "gemini", CollectedAt: t0.Add(time.Hour).Format(time.RFC3339),
		Metrics: []usage.Metric{{Name: "m", Value: -1}},
	})
	requireFields(t, err, "provider", "metrics[0].value", "collected_at")
	require.Zero(t, e.count(t, "usage_snapshots"))
}
