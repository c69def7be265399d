package allinone_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
)

// TestDeclarationsHold: the module list is what every process, the gateway
// and deploy's checks derive from, so its declarations must hold together:
// one module per name, every peer a module of the list serving gRPC, and
// the gateway in front of every module with routes.
func TestDeclarationsHold(t *testing.T) {
	t.Parallel()
	mods := allinone.Modules()
	byName := map[string]app.Module{}
	for _, m := range mods {
		_, dup := byName[m.Name]
		require.False(t, dup, "two modules are called %s", m.Name)
		byName[m.Name] = m
	}
	for _, m := range mods {
		for _, p := range m.Peers {
			peer, ok := byName[p]
			require.True(t, ok, "%s declares the peer %s, which is no module of allinone.Modules", m.Name, p)
			require.NotEmpty(t, peer.Service, "%s declares the peer %s, which serves no gRPC service to dial", m.Name, p)
			require.NotEqual(t, m.Name, p, "%s declares itself as a peer", m.Name)
		}
	}

	gw := allinone.Gateway()
	require.Equal(t, byName["gateway"].Peers, gw.Peers, "the gateway's binary and the all-in-one run front the same services")
	for _, m := range allinone.Services() {
		require.NotEmpty(t, m.Service, "%s is listed as a service but serves no gRPC service", m.Name)
		if m.Routes != nil {
			require.Contains(t, gw.Peers, m.Name, "the gateway does not dial %s, whose routes it serves", m.Name)
		}
	}
	// Every process takes the address of every service, as before modules
	// declared their peers.
	var services []string
	for _, m := range allinone.Services() {
		services = append(services, m.Name)
	}
	require.Equal(t, services, app.Peers(mods))
}
