package gateway

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	ledgerinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

// TestInternalServicesHaveNoRoute: the REST mapping names only the public
// services. An internal RPC reachable over REST would skip the service
// credential, since the gateway presents it on every call it forwards.
func TestInternalServicesHaveNoRoute(t *testing.T) {
	mapping, err := os.ReadFile("api.yaml")
	require.NoError(t, err)
	selectors := regexp.MustCompile(`selector:\s*foundry\.[a-z]+\.v1\.([A-Za-z]+)\.`).FindAllStringSubmatch(string(mapping), -1)
	require.Greater(t, len(selectors), 50, "api.yaml's rules were read")
	public := map[string]bool{"PortfolioService": true, "LedgerService": true, "AgentService": true, "OpsService": true}
	for _, m := range selectors {
		require.True(t, public[m[1]], "api.yaml maps a method of %s, which is not a public service", m[1])
	}
	for _, internal := range []string{
		portfoliointernalv1.PortfolioInternalService_ServiceDesc.ServiceName,
		ledgerinternalv1.LedgerInternalService_ServiceDesc.ServiceName,
		opsinternalv1.OpsInternalService_ServiceDesc.ServiceName,
		"foundry.internal.platform.v1.StorageService",
	} {
		require.NotContains(t, string(mapping), internal+".")
	}
}

// TestClientCannotSendServiceKey: no REST header becomes the service-key
// metadata or the verified principal, whatever its spelling; only the
// gateway's own connection presents the key, and only its edge
// authentication names the principal. The credentials themselves stay at
// the edge too (authenticate removes them).
func TestClientCannotSendServiceKey(t *testing.T) {
	for _, h := range []string{servicecred.MetadataKey, "Foundry-Service-Key", "Grpc-Metadata-Foundry-Service-Key", "grpc-metadata-foundry-service-key",
		authz.MetadataKey, "Foundry-Principal", "Grpc-Metadata-Foundry-Principal", "X-Api-Key", "Authorization"} {
		_, forwarded := incomingHeader(h)
		require.False(t, forwarded, "header %q must not be forwarded", h)
	}
	key, forwarded := incomingHeader("Idempotency-Key")
	require.True(t, forwarded, "the Idempotency-Key is")
	require.Equal(t, "idempotency-key", key)
}
