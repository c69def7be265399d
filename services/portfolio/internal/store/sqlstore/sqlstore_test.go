package sqlstore_test

import (
	"testing"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/portfolio/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		storetest.Run(t, func(t *testing.T) storetest.Harness {
			return storetest.Harness{
				DB:        dbtest.Open(t, engine, "portfolio", store.Migrations()),
				Ideas:     func(q database.Querier) store.Ideas { return sqlstore.NewIdeas(q) },
				Questions: func(q database.Querier) store.Questions { return sqlstore.NewQuestions(q) },
				Snapshots: func(q database.Querier) store.Snapshots { return sqlstore.NewSnapshots(q) },
			}
		})
	})
}
