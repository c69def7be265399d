// Package migrate applies a service's embedded schema migrations, files named
// NNNN_description.sql. SQL that is the same on both engines lives in the
// directory "common"; SQL that differs lives in "postgres" and "sqlite" under
// the same version number, so a schema version means the same thing
// everywhere.
//
// Replicas may race: on Postgres every migration runs in a transaction that
// first takes an advisory lock keyed on the schema and re-checks the version,
// and on SQLite the transaction takes the write lock when it begins.
package migrate

import (
	"context"
	"embed"
	"errors"
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

// Common is the directory of migrations whose SQL is the same on every
// engine; an engine's own directory holds the versions that differ.
const Common = "common"

// engines are the directories a migration set may have besides Common.
var engines = []database.Engine{database.Postgres, database.SQLite}

// Load reads the migrations for engine from fsys, ordered by version: the
// files of its directory ("postgres" or "sqlite") and of Common. A version
// must be defined once for each engine, and both engines must have the same
// versions, so a migration written for one engine only fails fast.
func Load(fsys fs.FS, engine database.Engine) ([]Migration, error) {
	sets := map[database.Engine]map[int]Migration{}
	common, err := readDir(fsys, Common)
	if err != nil {
		return nil, err
	}
	for _, e := range engines {
		own, err := readDir(fsys, string(e))
		if err != nil {
			return nil, err
		}
		set := map[int]Migration{}
		for v, m := range common {
			set[v] = m
		}
		for v, m := range own {
			if _, dup := common[v]; dup {
				return nil, fmt.Errorf("migration version %d is both in %s and in %s", v, Common, e)
			}
			set[v] = m
		}
		sets[e] = set
	}
	for v := range sets[database.Postgres] {
		if _, ok := sets[database.SQLite][v]; !ok {
			return nil, fmt.Errorf("migration version %d exists for postgres but not for sqlite", v)
		}
	}
	for v := range sets[database.SQLite] {
		if _, ok := sets[database.Postgres][v]; !ok {
			return nil, fmt.Errorf("migration version %d exists for sqlite but not for postgres", v)
		}
	}
	set, ok := sets[engine]
	if !ok {
		return nil, fmt.Errorf("no migrations for engine %q", engine)
	}
	out := make([]Migration, 0, len(set))
	for _, m := range set {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// readDir reads one directory of NNNN_name.sql files; a missing directory
// holds none.
func readDir(fsys fs.FS, dir string) (map[int]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[int]Migration{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s migrations: %w", dir, err)
	}
	out := map[int]Migration{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s/%s: want NNNN_name.sql", dir, e.Name())
		}
		if prev, dup := out[v]; dup {
			return nil, fmt.Errorf("migration version %d twice in %s: %s and %s", v, dir, prev.Name, name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		out[v] = Migration{Version: v, Name: name, SQL: string(body)}
	}
	return out, nil
}

// Embedded returns the "migrations" directory of a service's embedded files
// (declared as //go:embed migrations).
func Embedded(files embed.FS) fs.FS {
	sub, err := fs.Sub(files, "migrations")
	if err != nil {
		panic(err) // cannot happen: fs.Sub fails only for an invalid path
	}
	return sub
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

// Pending lists the migrations of fsys not yet applied to db, oldest
// first, without applying anything (a database never migrated has them
// all pending).
func Pending(ctx context.Context, db *database.DB, fsys fs.FS) ([]Migration, error) {
	migrations, err := Load(fsys, db.Engine())
	if err != nil {
		return nil, err
	}
	var exists bool
	if db.Engine() == database.Postgres {
		err = db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, db.Schema()+".schema_migrations").Scan(&exists)
	} else {
		err = db.QueryRow(ctx, `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&exists)
	}
	if err != nil {
		return nil, fmt.Errorf("find the migrations table: %w", err)
	}
	if !exists {
		return migrations, nil
	}
	rows, err := db.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read applied migrations: %w", err)
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	var out []Migration
	for _, m := range migrations {
		if !applied[m.Version] {
			out = append(out, m)
		}
	}
	return out, nil
}
