package e2e_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

// TestKeysRotateWithoutDowntime: while a key rotates, a process accepts
// the key it presents and the one -…-key-accept names, and nothing else;
// the administrator's X-API-Key through the gateway and the service key
// over gRPC alike.
func TestKeysRotateWithoutDowntime(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite),
		"-admin-key-accept=previous-admin-key-0123456789abcdef", "-service-key-accept=previous-service-key-0123456789abcd")

	for key, want := range map[string]int{
		allinonetest.AdminKey:                 http.StatusOK,
		"previous-admin-key-0123456789abcdef": http.StatusOK,
		"some-guess":                          http.StatusUnauthorized,
	} {
		requireStatus(t, want, request(t, http.MethodGet, sys.URL("/api/tokens"), nil, "X-API-Key: "+key))
	}

	call := func(key string) codes.Code {
		conn, err := grpc.NewClient(sys.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithPerRPCCredentials(servicecred.PerRPC(key, false)))
		require.NoError(t, err)
		defer conn.Close()
		_, err = ledgerv1.NewLedgerServiceClient(conn).GetSupply(context.Background(), &ledgerv1.GetSupplyRequest{})
		return status.Code(err)
	}
	require.Equal(t, codes.OK, call(allinonetest.ServiceKey))
	require.Equal(t, codes.OK, call("previous-service-key-0123456789abcd"), "the accepted key")
	require.Equal(t, codes.Unauthenticated, call("some-guess"))
}
