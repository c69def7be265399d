package sqlstore_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/store/storetest"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// BenchmarkCreateDistribution measures the distribution use case over an
// asset with 100 000 contributions, from 1 000 and from 100 000
// contributors: summing the stakes in SQL, splitting them with big
// integers, and writing the distribution and one payout row per
// contributor, in one transaction.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/ledger/internal/store/sqlstore -run '^$' -bench CreateDistribution -benchtime 10x
func BenchmarkCreateDistribution(b *testing.B) {
	const contributions = 100_000
	for _, engine := range []database.Engine{database.Postgres, database.SQLite} {
		for _, contributors := range []int{1_000, 100_000} {
			b.Run(fmt.Sprintf("%s/contributions=%d/contributors=%d", engine, contributions, contributors), func(b *testing.B) {
				if engine == database.Postgres && dbtest.PostgresURL() == "" {
					b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
				}
				db := dbtest.Open(b, engine, "ledger", store.Migrations())
				app := usecase.New(db, func(q database.Querier) usecase.Repos {
					return usecase.Repos{
						Credit: sqlstore.NewCredit(q), Audit: sqlstore.NewAudit(q), Integrity: sqlstore.NewIntegrity(q),
						Identity: sqlstore.NewIdentity(q), Attribution: sqlstore.NewAttribution(q), Impact: sqlstore.NewImpact(q),
						Keys: idempotency.SQL{Q: q}, Send: q.SendBatch,
					}
				}, usecase.Config{})
				assetID := seedContributions(b, db, contributions, contributors)
				ctx := context.Background()
				b.ResetTimer()
				for b.Loop() {
					d, err := app.CreateDistribution(ctx, usecase.CreateDistributionCmd{AssetID: assetID, ValueAmount: 1_000_000})
					if err != nil {
						b.Fatal(err)
					}
					if len(d.Payouts) != contributors {
						b.Fatalf("%d payouts, want %d", len(d.Payouts), contributors)
					}
				}
			})
		}
	}
}

// seedContributions writes n contributions from k contributors straight
// into the tables with multi-row INSERTs (through the store it would take
// minutes) and sets the asset's total to match.
func seedContributions(b *testing.B, db *database.DB, n, k int) string {
	b.Helper()
	ctx := context.Background()
	asset := store.Asset{ID: uuid.NewString(), Type: attribution.TypeCode, Name: "bench", CreatedAt: time.Now()}
	if err := sqlstore.NewAttribution(db).CreateAsset(ctx, asset); err != nil {
		b.Fatal(err)
	}
	const batch = 1000
	insert := func(table string, cols int, rows int, row func(i int) []any) {
		for start := 0; start < rows; start += batch {
			end := min(start+batch, rows)
			var q strings.Builder
			args := make([]any, 0, cols*(end-start))
			fmt.Fprintf(&q, "INSERT INTO %s VALUES ", table)
			for i := start; i < end; i++ {
				if i > start {
					q.WriteString(", ")
				}
				fmt.Fprintf(&q, "(%s)", database.Placeholders(len(args)+1, cols))
				args = append(args, row(i)...)
			}
			if _, err := db.Exec(ctx, q.String(), args...); err != nil {
				b.Fatal(err)
			}
		}
	}
	now := time.Now().UnixMicro()
	insert("contributors (id, handle, trust_level, created_at)", 4, k, func(i int) []any {
		return []any{fmt.Sprintf("c%06d", i), nil, attribution.TrustImplicit, now}
	})
	var total int64
	insert("contributions (id, contributor_id, asset_id, cost_micros, coherence, metadata, source, created_at)", 8, n, func(i int) []any {
		cost := int64(i%997+1) * int64(money.Cent)
		total += cost
		return []any{uuid.NewString(), fmt.Sprintf("c%06d", i%k), asset.ID, cost, int64(500 + 100*(i%6)), "{}", attribution.SourceAPI, now + int64(i)}
	})
	if _, err := db.Exec(ctx, `UPDATE assets SET total_cost_micros = $2, contribution_count = $3 WHERE id = $1`, asset.ID, total, n); err != nil {
		b.Fatal(err)
	}
	if engine := db.Engine(); engine == database.Postgres {
		if _, err := db.Exec(ctx, `ANALYZE contributions`); err != nil {
			b.Fatal(err)
		}
	}
	return asset.ID
}

// BenchmarkHistoryPage reads the newest page of 50 of a contributor with
// 2 000 movements, each with its lines.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/ledger/internal/store/sqlstore -run '^$' -bench HistoryPage
func BenchmarkHistoryPage(b *testing.B) {
	for _, engine := range []database.Engine{database.Postgres, database.SQLite} {
		b.Run(string(engine), func(b *testing.B) {
			if engine == database.Postgres && dbtest.PostgresURL() == "" {
				b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
			}
			db := dbtest.Open(b, engine, "ledger", store.Migrations())
			ctx := context.Background()
			at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
			for i := range 2000 {
				je := store.JournalEntry{ID: uuid.NewString(), Entry: credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), money.Scale),
					ContributorID: "ada", Amount: money.Scale, CreatedAt: at.Add(time.Duration(i) * time.Millisecond)}
				if err := db.Tx(ctx, func(tx database.Querier) error {
					_, err := sqlstore.NewCredit(tx).Apply(ctx, store.Movement{Journal: je})
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			c := sqlstore.NewCredit(db)
			b.ResetTimer()
			for b.Loop() {
				page, _, err := c.History(ctx, "ada", 50, 0)
				if err != nil || len(page) != 50 {
					b.Fatalf("%d entries, %v", len(page), err)
				}
			}
		})
	}
}

// BenchmarkParallelContributions measures contributions written by 8
// goroutines at once (SetParallelism over GOMAXPROCS), each to an asset of
// its own, a transaction each, on Postgres: with the trigger that keeps
// the contributions' count (migration 0027, a row of row_counts each
// insert adds to, the shard of its connection) and, as the baseline in
// the same run, with it dropped.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/ledger/internal/store/sqlstore -run '^$' -bench ParallelContributions -count 5
func BenchmarkParallelContributions(b *testing.B) {
	if dbtest.PostgresURL() == "" {
		b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
	}
	for _, counted := range []bool{true, false} {
		b.Run(fmt.Sprintf("counted=%t", counted), func(b *testing.B) {
			db := dbtest.Open(b, database.Postgres, "ledger", store.Migrations())
			ctx := context.Background()
			if !counted {
				if _, err := db.Exec(ctx, `DROP TRIGGER contributions_counted ON contributions`); err != nil {
					b.Fatal(err)
				}
			}
			at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
			const writers = 8
			for i := range writers {
				id := fmt.Sprintf("asset-%d", i)
				if err := sqlstore.NewAttribution(db).CreateAsset(ctx, store.Asset{ID: id, Type: "CODE", Name: id, Description: "d", CreatedAt: at}); err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Int64
			b.SetParallelism(max(1, writers/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				asset := fmt.Sprintf("asset-%d", next.Add(1)%writers)
				for pb.Next() {
					c := storetest.NewContribution("ada", asset, 1, at)
					if err := db.Tx(ctx, func(q database.Querier) error {
						_, err := sqlstore.NewAttribution(q).AddContribution(ctx, c, storetest.Implicit("ada", at))
						return err
					}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
