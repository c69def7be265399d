package migrate_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

func file(sql string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(sql)} }

func TestLoadMergesCommonAndEngineFiles(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"common/0001_init.sql":   file("CREATE TABLE a (id TEXT);"),
		"postgres/0002_json.sql": file("ALTER TABLE a ADD COLUMN j JSONB;"),
		"sqlite/0002_json.sql":   file("ALTER TABLE a ADD COLUMN j TEXT;"),
		"common/0003_index.sql":  file("CREATE INDEX a_id ON a (id);"),
		"common/README.md":       file("not a migration"),
	}
	for engine, want := range map[database.Engine][]string{
		database.Postgres: {"CREATE TABLE a (id TEXT);", "ALTER TABLE a ADD COLUMN j JSONB;", "CREATE INDEX a_id ON a (id);"},
		database.SQLite:   {"CREATE TABLE a (id TEXT);", "ALTER TABLE a ADD COLUMN j TEXT;", "CREATE INDEX a_id ON a (id);"},
	} {
		ms, err := migrate.Load(fsys, engine)
		require.NoError(t, err)
		var got []string
		for k, m := range ms {
			require.Equal(t, k+1, m.Version)
			got = append(got, m.SQL)
		}
		require.Equal(t, want, got, "engine %s", engine)
	}
}

func TestLoadRejectsInconsistentSets(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		fsys fstest.MapFS
		want string
	}{
		"one engine only": {fstest.MapFS{"postgres/0001_a.sql": file("x")}, "exists for postgres but not for sqlite"},
		"common and engine": {fstest.MapFS{"common/0001_a.sql": file("x"), "sqlite/0001_a.sql": file("y"), "postgres/0001_a.sql": file("y")},
			"both in common and in"},
		"bad name":      {fstest.MapFS{"common/first.sql": file("x")}, "want NNNN_name.sql"},
		"version twice": {fstest.MapFS{"common/0001_a.sql": file("x"), "common/0001_b.sql": file("y")}, "twice"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := migrate.Load(tt.fsys, database.SQLite)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
