package usecase_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// endedQ notes the batches after which its transaction refused another
// statement: those that ended it (database.Batch.Final; on Postgres their
// COMMIT rode with them).
type endedQ struct {
	database.Querier
	ended *atomic.Int64
}

func (q endedQ) SendBatch(ctx context.Context, b *database.Batch) error {
	err := q.Querier.SendBatch(ctx, b)
	if _, probe := q.Exec(ctx, `SELECT 1`); errors.Is(probe, database.ErrTxEnded) {
		q.ended.Add(1)
	}
	return err
}

// TestAContributionEndsItsTransactionWithItsBatch: the contribution's one
// batch is its transaction's last (the asset's row lock is released with
// it), and a refusal, which that batch already committed on Postgres, has
// changed nothing and still says why.
func TestAContributionEndsItsTransactionWithItsBatch(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		ended := new(atomic.Int64)
		app := usecase.New(dbtest.Open(t, engine, "ledger", store.Migrations()), func(q database.Querier) usecase.Repos {
			r := repos(endedQ{Querier: q, ended: ended})
			r.Send = endedQ{Querier: q, ended: ended}.SendBatch
			return r
		}, usecase.Config{Clock: clock.NewFake(t0)})
		asset, err := app.CreateAsset(ctx, usecase.CreateAssetCmd{Type: "CODE", Name: "n", Description: "d"})
		require.NoError(t, err)
		cost := 1.5
		c, err := app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada", AssetID: asset.ID, CostAmount: &cost,
			Metadata: map[string]any{}}, nil)
		require.NoError(t, err)
		require.Equal(t, int64(1), ended.Load(), "the contribution's batch ended its transaction")
		got, err := app.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)

		_, err = app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ghost", AssetID: "no-such-asset", CostAmount: &cost,
			Metadata: map[string]any{}}, nil)
		fe, ok := fault.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, fault.NotFound, fe.Kind)
		require.Equal(t, `asset "no-such-asset" not found`, fe.Detail)
		_, err = app.Contributor(ctx, "ghost")
		require.Error(t, err, "the refused contribution created no contributor")
	})
}
