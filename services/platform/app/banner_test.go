package app

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBanner: a laptop run says where everything is and where its
// administrator key is kept, and how people call gRPC: with their own
// credential. The service key, even one the run generated, is never shown
// (the issue's: it was handed to people as a credential).
func TestBanner(t *testing.T) {
	t.Parallel()
	p := &Process{GRPCAddr: "127.0.0.1:9090", HTTPAddr: "127.0.0.1:8080", AdminAddr: "127.0.0.1:9100",
		Settings: &Settings{DataDir: "data", AdminKeyPath: "data/admin.key", ServiceKey: "k123"}}
	var out bytes.Buffer
	printBanner(&out, p, []Module{{Name: "ledger"}, {Name: "gateway"}})
	require.Equal(t, `
Foundry is running ([ledger gateway], storage: sqlite files in data)
  dashboard  http://127.0.0.1:8080/
  REST API   http://127.0.0.1:8080/api
  API docs   http://127.0.0.1:8080/api/docs/
  gRPC       127.0.0.1:9090 (metadata authorization: Bearer <token>, or x-api-key)
  metrics    http://127.0.0.1:9100/metrics
  admin key  data/admin.key (X-API-Key; the CLI uses it against this machine)
Press Ctrl-C to stop.

`, out.String())
	require.NotContains(t, out.String(), "k123", "a generated service key is not shown either")

	out.Reset()
	p.Settings = &Settings{DatabaseURL: "postgres://x", ServiceKey: "configured"}
	printBanner(&out, p, []Module{{Name: "ledger"}})
	require.NotContains(t, out.String(), "configured", "a configured key is never shown")
	require.NotContains(t, out.String(), "admin key")
}
