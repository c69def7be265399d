package app

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBanner: a laptop run says where everything is, where its
// administrator key is kept, and the service key it generated, as an
// export line for gRPC callers (the key is not logged).
func TestBanner(t *testing.T) {
	t.Parallel()
	p := &Process{GRPCAddr: "127.0.0.1:9090", HTTPAddr: "127.0.0.1:8080", AdminAddr: "127.0.0.1:9100",
		Settings: &Settings{DataDir: "data", AdminKeyPath: "data/admin.key", ServiceKey: "k123", ServiceKeyGenerated: true}}
	var out bytes.Buffer
	printBanner(&out, p, []Module{{Name: "ledger"}, {Name: "gateway"}})
	require.Equal(t, `
Foundry is running ([ledger gateway], storage: sqlite files in data)
  dashboard  http://127.0.0.1:8080/
  REST API   http://127.0.0.1:8080/api
  API docs   http://127.0.0.1:8080/api/docs/
  gRPC       127.0.0.1:9090
  metrics    http://127.0.0.1:9100/metrics
  admin key  data/admin.key (X-API-Key; the CLI uses it against this machine)
  gRPC key   export FOUNDRY_CLI_SERVICE_KEY=k123   (metadata foundry-service-key)
Press Ctrl-C to stop.

`, out.String())

	out.Reset()
	p.Settings = &Settings{DatabaseURL: "postgres://x", ServiceKey: "configured"}
	printBanner(&out, p, []Module{{Name: "ledger"}})
	require.NotContains(t, out.String(), "configured", "a configured key is never shown")
	require.NotContains(t, out.String(), "admin key")
}
