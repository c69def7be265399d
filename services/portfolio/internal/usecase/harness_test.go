package usecase_test

import (
	"testing"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// openApp returns the use cases over a fresh, migrated database of
// engine, with every repository as the portfolio module builds them.
func openApp(t testing.TB, engine database.Engine, cfg usecase.Config) *usecase.App {
	t.Helper()
	return usecase.New(dbtest.Open(t, engine, "portfolio", store.Migrations()), repos, cfg)
}

// repos builds every repository over q.
func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{Ideas: sqlstore.NewIdeas(q), Questions: sqlstore.NewQuestions(q), Snapshots: sqlstore.NewSnapshots(q)}
}
