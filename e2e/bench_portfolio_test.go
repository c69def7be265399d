package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// BenchmarkListIdeas measures GET /api/ideas (a page of 50) through the
// gateway on Postgres, with 1k and with 100k ideas, and reports the p50 and
// p95 latency of the requests it made. The ranking reads one index page and
// the summary one row, so the two sizes should cost about the same.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./e2e -run '^$' -bench ListIdeas -benchtime 2000x
func BenchmarkListIdeas(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("ideas=%d", n), func(b *testing.B) {
			storage := allinonetest.NewStorage(b, database.Postgres)
			sys := allinonetest.Start(b, storage)
			seedIdeas(b, storage.DatabaseURL, n)
			url := sys.URL("/api/ideas?limit=50")
			get := func() {
				resp, err := client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			for range 50 { // warm the pool and the caches
				get()
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				get()
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
		})
	}
}

// seedIdeas inserts n ideas straight into the portfolio schema (through the
// API it would take minutes) and sets the totals to match.
func seedIdeas(b *testing.B, url string, n int) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	now := time.Now().UnixMicro()
	_, err = conn.Exec(ctx, `
		INSERT INTO portfolio.ideas (id, name, description, potential_value, estimated_cost, actual_value, actual_cost,
			confidence, resistance_risk, stage, manifestation_status, score, created_at, updated_at)
		SELECT 'seed-' || g, 'Seeded idea ' || g, 'description ' || g, (g % 997) + 1, (g % 89) + 1, 0, 0,
			0.5, 1, 'none', 'none', ((g % 997) + 1) * 0.5 / ((g % 89) + 2), $2, $2
		FROM generate_series(1, $1) AS g`, n, now)
	if err != nil {
		b.Fatal(err)
	}
	_, err = conn.Exec(ctx, `UPDATE portfolio.portfolio_totals SET total_ideas = $1,
		potential_value_micros = (SELECT SUM(potential_value * 1000000)::BIGINT FROM portfolio.ideas)`, n)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE portfolio.ideas`); err != nil {
		b.Fatal(err)
	}
}
