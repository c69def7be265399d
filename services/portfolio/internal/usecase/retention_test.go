package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// TestSnapshotsLastTheirRetention: a health snapshot older than the
// retention goes (PruneSnapshots, the retention runner's prune), one the
// longest history window still shows stays.
func TestSnapshotsLastTheirRetention(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		fc := clock.NewFake(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		app := openApp(t, engine, usecase.Config{Clock: fc})
		for _, after := range []time.Duration{0, 30 * 24 * time.Hour, 380 * 24 * time.Hour} {
			fc.Advance(after)
			_, err := app.TakeSnapshot(ctx)
			require.NoError(t, err)
		}
		n, err := app.PruneSnapshots(ctx, fc.Now().Add(-usecase.DefaultSnapshotRetention), 10)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "410 days old: past the retention")
		year := int32(usecase.MaxHistoryDays)
		kept, err := app.History(ctx, &year)
		require.NoError(t, err)
		require.Len(t, kept, 1, "the year's window holds the newest; the 380-day-old one is kept but outside it")
		n, err = app.PruneSnapshots(ctx, fc.Now().Add(-usecase.DefaultSnapshotRetention), 10)
		require.NoError(t, err)
		require.Zero(t, n, "380 days old: within the retention")
	})
}
