package cli_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/platform/authz"
)

// TestGatewayKeygen: foundry gateway keygen prints the two environment
// lines a split deployment needs, a pair the gateway and the services
// read as such; with -o json the same pair as fields.
func TestGatewayKeygen(t *testing.T) {
	t.Parallel()
	out := ok(t, nil, "gateway", "keygen")
	m := regexp.MustCompile(`^FOUNDRY_PRINCIPAL_SIGNING_KEY=(PRIVATE\+KEY\+foundry-gateway\+\S+)\nFOUNDRY_PRINCIPAL_VERIFIER_KEYS=(foundry-gateway\+[0-9a-f]{8}\+\S+)\n$`).
		FindStringSubmatch(out)
	require.NotNil(t, m, "%q", out)
	fwd, err := authz.NewForwarder(m[1])
	require.NoError(t, err)
	require.Equal(t, m[2], fwd.VerifierKey(), "the verifier key of the signing key")
	_, err = authz.NewTrust(m[2])
	require.NoError(t, err)

	doc := okJSON(t, nil, "gateway", "keygen", "--name", "acme-gateway")
	require.Regexp(t, `^PRIVATE\+KEY\+acme-gateway\+`, doc["signing_key"])
	require.Regexp(t, `^acme-gateway\+[0-9a-f]{8}\+`, doc["verifier_key"])
	r := run(t, nil, "gateway", "keygen", "--name", "a b")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "a key's name is not empty")
}
