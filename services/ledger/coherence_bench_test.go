package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// BenchmarkCheckCoherence measures the monitor's coherence check over a
// sound ledger of 1 000 and of 20 000 deposits (each a journal entry and
// two audit entries, all sequenced), with ten new deposits before each
// check, as a busy interval would bring. The two sizes' ns/op compare
// what the check costs with history; docs/performance.md has the runs.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/ledger -run '^$' -bench CheckCoherence -benchtime 20x
func BenchmarkCheckCoherence(b *testing.B) {
	for _, engine := range []database.Engine{database.SQLite, database.Postgres} {
		for _, deposits := range []int{1_000, 20_000} {
			b.Run(fmt.Sprintf("%s/deposits=%d", engine, deposits), func(b *testing.B) {
				if engine == database.Postgres && dbtest.PostgresURL() == "" {
					b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
				}
				db := dbtest.Open(b, engine, "ledger", store.Migrations())
				ctx := context.Background()
				app, _ := benchApp(b, db)
				if err := app.Register(ctx, store.Contributor{ID: "ada", Handle: "ada", TrustLevel: "tofu", CreatedAt: time.Now()},
					store.Session{TokenHash: "bench", CreatedAt: time.Now()}); err != nil {
					b.Fatal(err)
				}
				n := 0
				deposit := func(k int) {
					for range k {
						n++
						if _, err := app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 1, Reference: fmt.Sprint("d-", n)}, nil); err != nil {
							b.Fatal(err)
						}
					}
					sequenceAll(b, app)
				}
				deposit(deposits)
				// A monitor that has been running: its checks are caught up,
				// and the seeded deposits are older than the 10 s the check
				// reads again each time (what it costs grows with the rate
				// of movements, not with history: measured apart).
				time.Sleep(11 * time.Second)
				if engine == database.Postgres {
					// What autovacuum would have done by now on a ledger this
					// old: without statistics the planner takes the tables
					// for empty and scans them.
					if _, err := db.Exec(ctx, `ANALYZE`); err != nil {
						b.Fatal(err)
					}
				}
				for range 50 {
					if _, err := app.CheckCoherence(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					deposit(10)
					b.StartTimer()
					c, err := app.CheckCoherence(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if !c.Trail().OK || len(c.Mismatched) > 0 {
						b.Fatalf("an unsound ledger: %+v", c.Trail())
					}
				}
			})
		}
	}
}
