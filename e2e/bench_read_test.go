package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// BenchmarkReadIdea measures GET /api/ideas/{id} end to end — the HTTP
// client, the gateway, the gRPC hop, the portfolio service and its read —
// on each engine (Postgres when FOUNDRY_TEST_DATABASE_URL is set), from
// eight clients at once, and reports the test process's CPU time per read
// (cpu-µs/op: client, gateway and service together, at the tests' log
// level, so without the access line) beside Go's allocations per read.
// Those two move far less between runs than a throughput on this machine
// does (the CPU within a few per cent, the allocations not at all): with
// benchstat over interleaved runs of two builds, they show a change to
// either side of the hop that make bench-http's ratios cannot tell from
// noise (docs/performance.md).
//
//	go test ./e2e -run '^$' -bench ReadIdea -benchtime 20000x -count 6
func BenchmarkReadIdea(b *testing.B) {
	for _, engine := range []database.Engine{database.SQLite, database.Postgres} {
		b.Run(string(engine), func(b *testing.B) {
			if engine == database.Postgres && dbtest.PostgresURL() == "" {
				b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
			}
			sys := allinonetest.Start(b, allinonetest.NewStorage(b, engine))
			create, err := http.NewRequest(http.MethodPost, sys.URL("/api/ideas"),
				bytes.NewReader([]byte(`{"name":"bench","description":"a read","potential_value":10,"estimated_cost":2}`)))
			if err != nil {
				b.Fatal(err)
			}
			create.Header.Set("Content-Type", "application/json")
			create.Header.Set("X-API-Key", allinonetest.AdminKey)
			resp, err := client.Do(create)
			if err != nil {
				b.Fatal(err)
			}
			var idea struct {
				ID string `json:"id"`
			}
			err = json.NewDecoder(resp.Body).Decode(&idea)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusCreated {
				b.Fatalf("create idea: status %d, %v", resp.StatusCode, err)
			}
			url := sys.URL("/api/ideas/" + idea.ID)
			// Each client keeps its connection, as make bench-http's do
			// (the default transport keeps two idle).
			keep := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer keep.CloseIdleConnections()
			get := func(b *testing.B) {
				resp, err := keep.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			for range 200 { // warm the pools and the caches
				get(b)
			}
			b.ReportAllocs()
			b.SetParallelism(4) // 4 × GOMAXPROCS clients
			b.ResetTimer()
			before := cpuTime(b)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(b)
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the CPU time (user and system) the test process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
