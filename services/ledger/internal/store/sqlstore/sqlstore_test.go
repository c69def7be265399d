package sqlstore_test

import (
	"testing"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/store/storetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		storetest.Run(t, func(t *testing.T) storetest.Harness {
			return storetest.Harness{
				DB:          dbtest.Open(t, engine, "ledger", store.Migrations()),
				Identity:    func(q database.Querier) store.Identity { return sqlstore.NewIdentity(q) },
				Attribution: func(q database.Querier) store.Attribution { return sqlstore.NewAttribution(q) },
				Credit:      func(q database.Querier) store.Credit { return sqlstore.NewCredit(q) },
				Audit:       func(q database.Querier) store.Audit { return sqlstore.NewAudit(q) },
				Integrity:   func(q database.Querier) store.Integrity { return sqlstore.NewIntegrity(q) },
				Impact:      func(q database.Querier) store.Impact { return sqlstore.NewImpact(q) },
			}
		})
	})
}
