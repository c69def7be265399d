package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/authz"
)

// forwarding is a module that starts only when its process can sign the
// principals a gateway forwards, as the gateway's module does.
func forwarding(signs *bool) app.Module {
	return app.Module{Name: "edge", Start: func(_ context.Context, h *app.Host) error {
		f, err := h.Forwarder()
		*signs = f != nil
		return err
	}}
}

// TestPrincipalKeySettings: a process that talks to others must be given
// the principal keys (the issue's: any holder of the service key could
// name any contributor); keys that are not keys are refused; a gateway
// needs the signing key, a service only the verifier keys; a single
// process makes a key for the run.
func TestPrincipalKeySettings(t *testing.T) {
	t.Parallel()
	key := "-service-key=" + strings.Repeat("s", 32)
	skey, vkey, err := authz.GenerateKey("foundry-gateway")
	require.NoError(t, err)
	var started string
	start := func(signs *bool, args ...string) error {
		mods := []app.Module{module(&started)}
		if signs != nil {
			mods = append(mods, forwarding(signs))
		}
		s, mods := settings(t, mods, args...)
		p, err := app.Start(context.Background(), s, mods)
		if err == nil {
			require.NoError(t, p.Stop(context.Background()))
		}
		return err
	}

	err = start(nil, key, "-ledger-addr=10.0.0.7:9090")
	require.ErrorContains(t, err, "FOUNDRY_PRINCIPAL_SIGNING_KEY (-principal-signing-key) and FOUNDRY_PRINCIPAL_VERIFIER_KEYS "+
		"(-principal-verifier-keys) are not set, and this process talks to other Foundry processes (the ledger service at 10.0.0.7:9090)")
	err = start(nil, key, "-ledger-addr=10.0.0.7:9090", "-principal-signing-key="+vkey)
	require.ErrorContains(t, err, "FOUNDRY_PRINCIPAL_SIGNING_KEY (-principal-signing-key): the principal signing key: not an Ed25519 note signing key")
	err = start(nil, key, "-ledger-addr=10.0.0.7:9090", "-principal-verifier-keys="+vkey+",nonsense")
	require.ErrorContains(t, err, `FOUNDRY_PRINCIPAL_VERIFIER_KEYS (-principal-verifier-keys): principal verifier key "nonsense" is not a note verifier key`)

	require.NoError(t, start(nil, key, "-ledger-addr=10.0.0.7:9090", "-principal-verifier-keys="+vkey), "a service needs only the verifier key")
	var signs bool
	err = start(&signs, key, "-ledger-addr=10.0.0.7:9090", "-principal-verifier-keys="+vkey)
	require.ErrorContains(t, err, "this process has no key to sign them with: set FOUNDRY_PRINCIPAL_SIGNING_KEY")
	require.False(t, signs)
	require.NoError(t, start(&signs, key, "-ledger-addr=10.0.0.7:9090", "-principal-signing-key="+skey))
	require.True(t, signs, "a gateway given the signing key")
	signs = false
	require.NoError(t, start(&signs))
	require.True(t, signs, "a single process makes a key for the run")
}
