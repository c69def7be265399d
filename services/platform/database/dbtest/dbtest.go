// Package dbtest opens throwaway databases for tests on every engine Foundry
// supports: SQLite always, Postgres when FOUNDRY_TEST_DATABASE_URL is set.
// Each Postgres database is a fresh schema dropped when the test ends, so
// tests run in parallel against one server.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"testing"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// URLEnv names the variable holding the Postgres test server's URL.
const URLEnv = "FOUNDRY_TEST_DATABASE_URL"

// PostgresURL returns the Postgres test URL, or "" when none is configured.
func PostgresURL() string { return os.Getenv(URLEnv) }

// Engines lists the engines a test can run on here.
func Engines() []database.Engine {
	if PostgresURL() != "" {
		return []database.Engine{database.SQLite, database.Postgres}
	}
	return []database.Engine{database.SQLite}
}

// Open returns a migrated, empty database on engine, closed (and on Postgres
// dropped) when the test ends. prefix names the schema (the service).
func Open(t testing.TB, engine database.Engine, prefix string, migrations fs.FS) *database.DB {
	t.Helper()
	ctx := context.Background()
	cfg := database.Config{Schema: prefix, DataDir: t.TempDir(), MaxConns: 4}
	if engine == database.Postgres {
		cfg.URL = PostgresURL()
		if cfg.URL == "" {
			t.Skipf("%s is not set: skipping Postgres", URLEnv)
		}
		cfg.Schema = UniqueSchema(prefix)
	}
	db, err := database.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open %s: %v", engine, err)
	}
	t.Cleanup(func() {
		if engine == database.Postgres {
			if _, err := db.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+cfg.Schema+` CASCADE`); err != nil {
				t.Errorf("drop test schema %s: %v", cfg.Schema, err)
			}
		}
		db.Close()
	})
	if migrations != nil {
		if _, err := migrate.Up(ctx, db, migrations); err != nil {
			t.Fatalf("migrate %s: %v", engine, err)
		}
	}
	return db
}

// UniqueSchema returns prefix plus a random suffix, a valid schema name.
func UniqueSchema(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "_t" + hex.EncodeToString(b)
}

// Each runs fn as a subtest per available engine, named after the engine.
func Each(t *testing.T, fn func(t *testing.T, engine database.Engine)) {
	t.Helper()
	for _, engine := range Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			fn(t, engine)
		})
	}
}
