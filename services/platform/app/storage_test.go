package app_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	platforminternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/platform/v1"
	"github.com/foundryhq/foundry/services/platform/app"
)

func TestDescribeStorage(t *testing.T) {
	t.Parallel()
	var started string
	dataDir := t.TempDir()
	s, mods := settings(t, []app.Module{module(&started), {Name: "plain"}}, "-data-dir="+dataDir)
	p, err := app.Start(context.Background(), s, mods)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Stop(context.Background())) }()

	conn, err := grpc.NewClient(p.GRPCAddr, asPeer(p)...)
	require.NoError(t, err)
	defer conn.Close()
	client := platforminternalv1.NewStorageServiceClient(conn)
	ctx := context.Background()

	got, err := client.DescribeStorage(ctx, &platforminternalv1.DescribeStorageRequest{Service: "demo"})
	require.NoError(t, err)
	require.Equal(t, "demo", got.GetService())
	require.Equal(t, "sqlite", got.GetBackend())
	require.Equal(t, int32(1), got.GetSchemaVersion(), "the demo module has one migration")
	require.Equal(t, "ok", got.GetStatus())
	require.Empty(t, got.GetDetail())
	require.Equal(t, filepath.Join(dataDir, "demo.db"), got.GetTarget())

	for _, tc := range []struct {
		name    string
		service string
		want    codes.Code
	}{
		{"a module without a database", "plain", codes.NotFound},
		{"a module the process does not run", "ledger", codes.NotFound},
		{"no module named", "", codes.InvalidArgument},
	} {
		_, err := client.DescribeStorage(ctx, &platforminternalv1.DescribeStorageRequest{Service: tc.service})
		require.Equal(t, tc.want, status.Code(err), "%s: %v", tc.name, err)
	}
}

func TestDescribeStorageIsAbsentWithoutDatabases(t *testing.T) {
	t.Parallel()
	s, mods := settings(t, []app.Module{{Name: "plain"}})
	p, err := app.Start(context.Background(), s, mods)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Stop(context.Background())) }()

	conn, err := grpc.NewClient(p.GRPCAddr, asPeer(p)...)
	require.NoError(t, err)
	defer conn.Close()
	_, err = platforminternalv1.NewStorageServiceClient(conn).DescribeStorage(context.Background(), &platforminternalv1.DescribeStorageRequest{Service: "plain"})
	require.Equal(t, codes.Unimplemented, status.Code(err), "no storage service is registered: %v", err)
}
