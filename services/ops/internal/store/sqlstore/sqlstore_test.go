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
		storetest.Run(t, func(t *testing.T) store.Store {
			return sqlstore.New(dbtest.Open(t, engine, "ops", store.Migrations()))
		})
	})
}
