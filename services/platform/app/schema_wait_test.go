package app

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

var waitMigrations = fstest.MapFS{
	"common/0001_first.sql":  {Data: []byte("CREATE TABLE a (id INTEGER PRIMARY KEY);")},
	"common/0002_second.sql": {Data: []byte("CREATE TABLE b (id INTEGER PRIMARY KEY);")},
}

func TestWaitForSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, database.Config{DataDir: t.TempDir(), Schema: "demo"})
	require.NoError(t, err)
	t.Cleanup(db.Close)

	err = waitForSchema(ctx, zap.NewNop(), db, waitMigrations, 0)
	require.ErrorContains(t, err, "lacks 2 migration(s) of this build (0001_first, 0002_second)")
	require.ErrorContains(t, err, "run foundry migrate (the migration Job) first")

	// The migration Job finishes while the process waits: it starts.
	done := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, err := migrate.Up(ctx, db, waitMigrations)
		done <- err
	}()
	require.NoError(t, waitForSchema(ctx, zap.NewNop(), db, waitMigrations, time.Minute))
	require.NoError(t, <-done)
	require.NoError(t, waitForSchema(ctx, zap.NewNop(), db, waitMigrations, 0), "current: no wait at all")

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	more := fstest.MapFS{"common/0003_third.sql": {Data: []byte("CREATE TABLE c (id INTEGER PRIMARY KEY);")}}
	for k, v := range waitMigrations {
		more[k] = v
	}
	require.ErrorIs(t, waitForSchema(canceled, zap.NewNop(), db, more, time.Minute), context.Canceled)
}
