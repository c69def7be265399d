package sqlstore_test

import (
	"testing"

	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ops/internal/store/storetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		storetest.Run(t, func(t *testing.T) storetest.Harness {
			return storetest.Harness{
				DB:     dbtest.Open(t, engine, "ops", store.Migrations()),
				Nodes:  func(q database.Querier) store.Nodes { return sqlstore.NewNodes(q) },
				Edges:  func(q database.Querier) store.Edges { return sqlstore.NewEdges(q) },
				Usage:  func(q database.Querier) store.UsageSnapshots { return sqlstore.NewUsageSnapshots(q) },
				Checks: func(q database.Querier) store.Checks { return sqlstore.NewChecks(q) },
			}
		})
	})
}
