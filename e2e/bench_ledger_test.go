package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// BenchmarkCreateContribution measures POST /api/contributions end to end —
// HTTP client, gateway, gRPC, ledger, one transaction that creates the
// contributor when absent, adds to the asset total and inserts the row — on
// each engine (Postgres when FOUNDRY_TEST_DATABASE_URL is set), one client
// at a time, and reports the p50 and p95 latency of its requests.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./e2e -run '^$' -bench CreateContribution -benchtime 2000x
func BenchmarkCreateContribution(b *testing.B) {
	for _, engine := range []database.Engine{database.Postgres, database.SQLite} {
		b.Run(string(engine), func(b *testing.B) {
			if engine == database.Postgres && dbtest.PostgresURL() == "" {
				b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
			}
			sys := allinonetest.Start(b, allinonetest.NewStorage(b, engine))
			assetID := benchAsset(b, sys)
			url := sys.URL("/api/contributions")
			i := 0
			post := func() {
				i++
				body, _ := json.Marshal(map[string]any{
					"contributor_id": fmt.Sprint("bench-", i%100), "asset_id": assetID, "cost_amount": 1.25,
					"metadata": map[string]any{"has_tests": i%2 == 0},
				})
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			for range 50 { // warm the pools
				post()
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				start := time.Now()
				post()
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
		})
	}
}

func benchAsset(b *testing.B, sys *allinonetest.System) string {
	b.Helper()
	resp, err := client.Post(sys.URL("/api/assets"), "application/json", bytes.NewReader([]byte(`{"type":"CODE","name":"bench"}`)))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != http.StatusCreated {
		b.Fatalf("create asset: status %d, %v", resp.StatusCode, err)
	}
	return a.ID
}
