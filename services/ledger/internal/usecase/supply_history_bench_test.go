package usecase_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// BenchmarkSupplyHistory measures the supply history of the last 90 days
// (GET /api/cc/supply/history?days=90, SupplyHistory) on ledgers that have
// run 1 000 to 1 000 000 days, each day with supply movements (however
// many a day has, they leave one row of supply_days: the window then
// holds its most rows, 90 plus the one before it), and reports the p50
// and p95 of the calls: the read's cost against a history up to a
// thousand times longer (docs/performance.md).
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/ledger/internal/usecase -run '^$' -bench SupplyHistory -benchtime 2000x
func BenchmarkSupplyHistory(b *testing.B) {
	for _, engine := range []database.Engine{database.Postgres, database.SQLite} {
		for _, days := range []int{1000, 10_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/days=%d", engine, days), func(b *testing.B) {
				if engine == database.Postgres && dbtest.PostgresURL() == "" {
					b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
				}
				e := setup(b, engine)
				// The ledger has run days days, up to today.
				e.clock.Advance(time.Duration(days) * 24 * time.Hour)
				today := e.clock.Now().UTC().Truncate(24 * time.Hour)
				seedSupplyDays(b, e.db, today, days)
				ctx := context.Background()
				window := int32(90)

				// The window's values are the seeded rows: the read is the one
				// measured, not an empty answer.
				points, err := e.app.SupplyHistory(ctx, &window)
				if err != nil {
					b.Fatal(err)
				}
				last := points[len(points)-1]
				if len(points) != 90 || !last.Day.Equal(today) || last.OutstandingCC != seededOutstanding(days-1) {
					b.Fatalf("the last of %d days is %v with %d CC outstanding, want %v with %d", len(points), last.Day,
						last.OutstandingCC, today, seededOutstanding(days-1))
				}

				b.Run("days=90", func(b *testing.B) {
					took := make([]float64, 0, b.N)
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						t0 := time.Now()
						if _, err := e.app.SupplyHistory(ctx, &window); err != nil {
							b.Fatal(err)
						}
						took = append(took, float64(time.Since(t0).Nanoseconds())/1e3)
					}
					b.StopTimer()
					slices.Sort(took)
					b.ReportMetric(took[len(took)*50/100], "p50-µs")
					b.ReportMetric(took[len(took)*95/100], "p95-µs")
				})
			})
		}
	}
}

// seededOutstanding is the CC outstanding seedSupplyDays writes for its
// i-th day: a value of its own per day, so the read's answer shows which
// row it came from.
func seededOutstanding(i int) money.Micros { return 1_000_000*money.Scale + money.Micros(i) }

// seedSupplyDays writes a supply_days row for each of the n days up to
// today, as n days with supply movements leave it, in one statement
// (a series: generate_series on Postgres, a recursive CTE on SQLite).
func seedSupplyDays(b *testing.B, db *database.DB, today time.Time, n int) {
	b.Helper()
	ctx := context.Background()
	series := fmt.Sprintf(`(WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < %d) SELECT i FROM s)`, n-1)
	if db.Engine() == database.Postgres {
		series = fmt.Sprintf(`(SELECT g AS i FROM generate_series(0, %d) g)`, n-1)
	}
	first := database.Micros(today.AddDate(0, 0, -(n - 1)))
	day := (24 * time.Hour).Microseconds()
	if _, err := db.Exec(ctx, fmt.Sprintf(`INSERT INTO supply_days (day, outstanding_cc, treasury_usd, reserve_ratio, updated_at)
		SELECT %d + i * %d, %d + i, %d, 1.005, %d + i * %d FROM %s t`,
		first, day, int64(seededOutstanding(0)), 10_000*money.Scale, first, day, series)); err != nil {
		b.Fatalf("seed: %v", err)
	}
	if db.Engine() == database.Postgres {
		if _, err := db.Exec(ctx, `ANALYZE supply_days`); err != nil {
			b.Fatal(err)
		}
	}
}
