package cli

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/mod/sumdb/note"
)

// keygen makes a signed-note key pair named name and prints it: as the
// environment lines of lines (a format of the signing key, then the
// verifier key), or as {"signing_key", "verifier_key"} for -o json.
func (e *env) keygen(name, lines string) error {
	if name == "" || !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool {
		return r == '+' || unicode.IsSpace(r) || unicode.IsControl(r)
	}) {
		return usagef("--name %q: a key's name is not empty and has no spaces, control characters or +", name)
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return err
	}
	if e.machine() {
		b, err := json.Marshal(map[string]string{"signing_key": skey, "verifier_key": vkey})
		if err != nil {
			return err
		}
		return e.printJSON(b)
	}
	_, err = fmt.Fprintf(e.stdout, lines, skey, vkey)
	return err
}

// --- gateway ---------------------------------------------------------------------

const defaultGatewayKeyName = "foundry-gateway"

func (e *env) gatewayCommand() *cobra.Command {
	return group("gateway", "The gateway's key: the one that signs the principals it forwards to the services", e.gatewayKeygen())
}

func (e *env) gatewayKeygen() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "keygen [--name NAME]",
		Short: "Make the key gateways sign forwarded principals with (FOUNDRY_PRINCIPAL_SIGNING_KEY) and its verifier key for the services",
		Long: `Make a new Ed25519 key (a signed-note key, golang.org/x/mod/sumdb/note)
for the gateways to sign the principal of every request they forward to the
services, and print it as environment lines:

  FOUNDRY_PRINCIPAL_SIGNING_KEY=PRIVATE+KEY+<name>+<hash>+<key>
  FOUNDRY_PRINCIPAL_VERIFIER_KEYS=<name>+<hash>+<key>

Give the first to every gateway and only to gateways; give the second to
every service (portfolio, ledger, agent, ops). A service then believes a
forwarded principal only with a gateway's signature, so the service key
alone cannot act as a contributor. A single-process run (make run) needs
neither: it makes a key of its own. Nothing is sent anywhere. With --json:
{"signing_key": "...", "verifier_key": "..."}.`,
		Example: `  foundry gateway keygen > principal.env && chmod 600 principal.env`,
		Args:    cobra.NoArgs,
	}
	cmd.RunE = func(*cobra.Command, []string) error {
		return e.keygen(name, "FOUNDRY_PRINCIPAL_SIGNING_KEY=%s\nFOUNDRY_PRINCIPAL_VERIFIER_KEYS=%s\n")
	}
	cmd.Flags().StringVar(&name, "name", defaultGatewayKeyName, "the key's name")
	return cmd
}
