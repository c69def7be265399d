// Package migrate applies a service's embedded schema migrations. Each engine
// has its own directory of files named NNNN_description.sql with the same
// version numbers on both, so a schema version means the same thing
// everywhere.
//
// Replicas may race: on Postgres every migration runs in a transaction that
// first takes an advisory lock keyed on the schema and re-checks the version,
// and on SQLite the transaction takes the write lock when it begins.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/database"
)

// Migration is one versioned step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Load reads the migrations for engine from fsys (directory "postgres" or
// "sqlite"), ordered by version.
func Load(fsys fs.FS, engine database.Engine) ([]Migration, error) {
	dir := string(engine)
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read %s migrations: %w", dir, err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s/%s: want NNNN_name.sql", dir, e.Name())
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migration version %d twice: %s and %s", v, prev, e.Name())
		}
		seen[v] = e.Name()
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Up applies every pending migration and returns how many it applied.
func Up(ctx context.Context, db *database.DB, fsys fs.FS) (int, error) {
	migrations, err := Load(fsys, db.Engine())
	if err != nil {
		return 0, err
	}
	if err := db.Tx(ctx, func(tx database.Querier) error {
		if err := lock(ctx, tx, db.Schema()); err != nil {
			return err
		}
		if db.Engine() == database.Postgres {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+db.Schema()); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at BIGINT NOT NULL
		)`)
		return err
	}); err != nil {
		return 0, fmt.Errorf("prepare migrations table: %w", err)
	}
	applied := 0
	for _, m := range migrations {
		var did bool
		err := db.Tx(ctx, func(tx database.Querier) error {
			did = false
			if err := lock(ctx, tx, db.Schema()); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, time.Now().UnixMicro())
			did = err == nil
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
		if did {
			applied++
		}
	}
	return applied, nil
}

// lock serializes migrators of one schema on Postgres for the transaction.
func lock(ctx context.Context, tx database.Querier, schema string) error {
	if tx.Engine() != database.Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "foundry.migrate."+schema)
	return err
}

// Version returns the highest applied migration version (0 when none).
func Version(ctx context.Context, db database.Querier) (int, error) {
	var v *int
	if err := db.QueryRow(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}
