package usecase_test

import (
	"testing"
	"time"

	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// t0 is the fake clock's starting time (microsecond precision, as stored).
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{
		Nodes: sqlstore.NewNodes(q), Edges: sqlstore.NewEdges(q),
		Usage: sqlstore.NewUsageSnapshots(q), Checks: sqlstore.NewChecks(q),
	}
}

type env struct {
	app   *usecase.App
	db    *database.DB
	clock *clock.Fake
}

// setup returns the use cases over a fresh ops database on engine, with a
// fake clock at t0 unless cfg sets a clock.
func setup(t *testing.T, engine database.Engine, cfg usecase.Config) env {
	t.Helper()
	db := dbtest.Open(t, engine, "ops", store.Migrations())
	fc := clock.NewFake(t0)
	if cfg.Clock == nil {
		cfg.Clock = fc
	}
	app := usecase.New(db, repos, cfg)
	t.Cleanup(app.Close)
	return env{app: app, db: db, clock: fc}
}

// count counts a table's rows.
func (e env) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := e.db.QueryRow(t.Context(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
