package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/store/storetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// counting is a querier that counts the trips it makes to the database: a
// statement, or a batch of them (one pipelined round trip on Postgres).
type counting struct {
	database.Querier
	trips int
}

func (c *counting) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	c.trips++
	return c.Querier.Exec(ctx, q, args...)
}

func (c *counting) Query(ctx context.Context, q string, args ...any) (database.Rows, error) {
	c.trips++
	return c.Querier.Query(ctx, q, args...)
}

func (c *counting) QueryRow(ctx context.Context, q string, args ...any) database.Row {
	c.trips++
	return c.Querier.QueryRow(ctx, q, args...)
}

func (c *counting) SendBatch(ctx context.Context, b *database.Batch) error {
	c.trips++
	return c.Querier.SendBatch(ctx, b)
}

// TestAContributionIsOneTrip: recording a contribution — its contributor,
// the asset's total, the row itself — is one trip to the database (on
// Postgres one round trip, plus the transaction's COMMIT, whose BEGIN
// travels with it); only a refusal costs a second, to say which.
func TestAContributionIsOneTrip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "ledger", store.Migrations())
		at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
		asset := store.Asset{ID: "a1", Type: "CODE", Name: "n", Description: "d", CreatedAt: at}
		require.NoError(t, sqlstore.NewAttribution(db).CreateAsset(ctx, asset))

		add := func(c store.Contribution) (int, error) {
			q := &counting{}
			err := db.Tx(ctx, func(tx database.Querier) error {
				q.Querier = tx
				_, err := sqlstore.NewAttribution(q).AddContribution(ctx, c, storetest.Implicit(c.ContributorID, at))
				return err
			})
			return q.trips, err
		}
		trips, err := add(storetest.NewContribution("ada", asset.ID, 5, at))
		require.NoError(t, err)
		require.Equal(t, 1, trips, "contributor, total and contribution in one batch")

		trips, err = add(storetest.NewContribution("ada", "missing", 5, at))
		require.ErrorIs(t, err, store.ErrNotFound)
		require.Equal(t, 2, trips, "a refusal reads once more to say why")
	})
}

// TestAHistoryPageIsTwoTrips: a page of a contributor's movements, each
// with its lines, is the count and one statement, however many entries
// the page holds (it was one more statement an entry: 51 for a page of
// 50).
func TestAHistoryPageIsTwoTrips(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "ledger", store.Migrations())
		at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
		const cc = money.Scale
		var want []store.JournalEntry
		for i := range 5 {
			je := store.JournalEntry{ID: fmt.Sprintf("e%d", i), Entry: credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), cc),
				ContributorID: "ada", Amount: cc, CreatedAt: at.Add(time.Duration(i) * time.Second)}
			require.NoError(t, db.Tx(ctx, func(tx database.Querier) error {
				_, err := sqlstore.NewCredit(tx).Apply(ctx, store.Movement{Journal: je})
				return err
			}))
			want = append([]store.JournalEntry{je}, want...)
		}
		q := &counting{Querier: db}
		got, total, err := sqlstore.NewCredit(q).History(ctx, "ada", 4, 0)
		require.NoError(t, err)
		require.Equal(t, 2, q.trips, "the count, and the page with its lines")
		require.Equal(t, 5, total)
		require.Len(t, got, 4)
		for i, e := range got {
			require.Equal(t, want[i].ID, e.ID, "newest first")
			require.ElementsMatch(t, want[i].Entry.Lines, e.Entry.Lines, "entry %s's lines", e.ID)
			require.Len(t, e.Entry.Lines, 2)
		}
	})
}
