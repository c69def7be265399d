package usecase_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// BenchmarkStake measures stake throughput through the use case: one
// transaction of one batch that takes the mode lock shared, moves the
// contributor's two balances, writes the journal entry and its lines and
// queues the audit entry (the sequencer does not run here) — with 1 and
// with 16 concurrent stakers (each its own contributor), so whether
// stakes of different contributors wait for each other shows.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/ledger/internal/usecase -run '^$' -bench Stake -benchtime 2000x
func BenchmarkStake(b *testing.B) {
	for _, engine := range []database.Engine{database.Postgres, database.SQLite} {
		for _, parallel := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/stakers=%d", engine, parallel), func(b *testing.B) {
				if engine == database.Postgres && dbtest.PostgresURL() == "" {
					b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
				}
				names := make([]string, parallel)
				for i := range names {
					names[i] = fmt.Sprintf("s%02d", i)
				}
				e := setup(b, engine, names...)
				ctx := context.Background()
				for _, n := range names {
					if _, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: n, AmountUSD: units(1_000_000 * cc), Reference: n}, nil); err != nil {
						b.Fatal(err)
					}
				}
				var next atomic.Int64
				b.SetParallelism(max(1, parallel/runtime.GOMAXPROCS(0)))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					name := names[int(next.Add(1)-1)%len(names)]
					for pb.Next() {
						if _, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: name, IdeaID: "idea-1", AmountCC: units(money.Scale)}, nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "stakes/s")
			})
		}
	}
}
