package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// TestPeersByDNSTarget: a peer address may be a gRPC target with the dns
// scheme, as the Kubernetes manifests give them (dns:///ledger-grpc:9090,
// a headless Service, so round robin spreads calls over every ready pod
// the name resolves to): a gateway given every peer that way serves.
func TestPeersByDNSTarget(t *testing.T) {
	t.Parallel()
	storage := allinonetest.NewStorage(t, database.SQLite)
	sys := allinonetest.Start(t, storage)
	var peers []string
	for _, svc := range allinonetest.ServiceNames() {
		peers = append(peers, "-"+svc+"-addr=dns:///"+sys.GRPCAddr)
	}
	gateway := allinonetest.NewProc(t, "gateway", "gateway", storage, peers...)
	gateway.Start()

	r := request(t, http.MethodPost, gateway.URL("/api/ideas"), map[string]any{"name": "By DNS", "potential_value": 10, "estimated_cost": 1})
	requireStatus(t, http.StatusCreated, r)
	got := request(t, http.MethodGet, sys.URL("/api/ideas/"+r.JSON["id"].(string)), nil)
	requireStatus(t, http.StatusOK, got)
	require.Equal(t, "By DNS", got.JSON["name"], "the gateway reached the portfolio through its dns:/// target")
}
