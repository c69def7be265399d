package sqlstore_test

import (
	"testing"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/agent/internal/store/storetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestConformance runs the agent repositories' conformance suite on every
// engine available (SQLite always, Postgres when
// FOUNDRY_TEST_DATABASE_URL is set).
func TestConformance(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		storetest.Run(t, func(t *testing.T) storetest.Harness {
			return storetest.Harness{
				DB:      dbtest.Open(t, engine, "agent", store.Migrations()),
				Tasks:   func(q database.Querier) store.Tasks { return sqlstore.NewTasks(q) },
				Stats:   func(q database.Querier) store.Stats { return sqlstore.NewStats(q) },
				Prompts: func(q database.Querier) store.Prompts { return sqlstore.NewPrompts(q) },
				Outbox:  func(q database.Querier) store.Outbox { return sqlstore.NewOutbox(q) },
				Loop:    func(q database.Querier) store.LoopPasses { return sqlstore.NewLoopPasses(q) },
			}
		})
	})
}
