package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// cliSignerSecret is the freeze signer's secret of these tests (32 bytes
// and more, as the ledger requires).
const cliSignerSecret = "cli-ops-secret-0123456789abcdef01"

// TestIncidentsAndAudit: a signer freezes with foundry incidents freeze
// (signed here: time, nonce, reason), an administrator unfreezes; the
// audit chain is listed in CC, verified (exit 1 when broken) and repaired;
// over both transports, on every engine.
func TestIncidentsAndAudit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		// A fixed audit signing key and fixed addresses: Foundry is restarted
		// below, and audit verify holds the key it trusted for the address.
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine), "-rate-poll-interval=0", "-signers=ops:"+cliSignerSecret,
			"-audit-signing-key="+auditSigningKey(t), "-http-addr="+allinonetest.FreeAddr(t), "-grpc-addr="+allinonetest.FreeAddr(t))
		reg := api(t, sys, http.MethodPost, "/api/onboarding/register", map[string]any{"handle": "ada"}, http.StatusCreated)
		api(t, sys, http.MethodPost, "/api/cc/deposit", map[string]any{"contributor_id": reg["contributor_id"], "amount_usd": 10,
			"reference": "wire-1"}, http.StatusCreated)
		secretFile := filepath.Join(t.TempDir(), "ops.secret")
		require.NoError(t, os.WriteFile(secretFile, []byte(cliSignerSecret+"\n"), 0o600))

		for _, tr := range transports(sys) {
			// Sequential: the economy's mode is shared.
			t.Run(tr.name, func(t *testing.T) {
				admin := with(tr.env, "FOUNDRY_API_KEY", allinonetest.AdminKey)
				signer := with(tr.env, "FOUNDRY_SIGNER_SECRET", cliSignerSecret)

				for _, c := range []struct {
					env  map[string]string
					args []string
					want string
				}{
					{signer, []string{"incidents", "freeze", "drill"}, "foundry: --signer is required\n"},
					{tr.env, []string{"incidents", "freeze", "drill", "--signer", "ops"},
						"foundry: the signer's secret is needed: --secret-file FILE or FOUNDRY_SIGNER_SECRET\n"},
					{tr.env, []string{"incidents", "freeze", "drill", "--signer", "ops", "--secret-file", filepath.Join(t.TempDir(), "none")},
						"foundry: --secret-file: open "},
				} {
					r := run(t, c.env, c.args...)
					require.Equal(t, cli.ExitUsage, r.code, "%v: %s", c.args, r.stderr)
					require.True(t, strings.HasPrefix(r.stderr, c.want), "%v: %q", c.args, r.stderr)
				}
				require.Equal(t, "normal", okJSON(t, tr.env, "incidents", "status")["mode"], "nothing was sent")

				r := run(t, with(tr.env, "FOUNDRY_SIGNER_SECRET", "another-secret-0123456789abcdef0123"), "incidents", "freeze", "drill", "--signer", "ops")
				require.Equal(t, cli.ExitFailed, r.code)
				require.Equal(t, "foundry: unknown signer or bad signature\n", r.stderr)

				out := ok(t, signer, "incidents", "freeze", "treasury keys may be compromised "+tr.name, "--signer", "ops")
				require.Regexp(t, row("frozen", "true"), out)
				require.Regexp(t, row("signer_id", "ops"), out)
				status := okJSON(t, tr.env, "incidents", "status")
				require.Equal(t, true, status["frozen"])
				require.Equal(t, "treasury keys may be compromised "+tr.name, status["frozen_reason"])

				// Each run signs anew (a new nonce): a second freeze is the
				// conflict, not a replay.
				r = run(t, signer, "incidents", "freeze", "again", "--signer", "ops", "--secret-file", secretFile)
				require.Equal(t, cli.ExitFailed, r.code)
				require.Equal(t, "foundry: already frozen\n", r.stderr)

				r = run(t, tr.env, "incidents", "unfreeze")
				require.Equal(t, cli.ExitFailed, r.code, "an administrator's")
				un := okJSON(t, admin, "incidents", "unfreeze", "--reason", "drill over")
				require.Equal(t, "normal", un["mode"])

				// The secret from a file, its newline not part of it.
				out = ok(t, tr.env, "incidents", "freeze", "from a file", "--signer", "ops", "--secret-file", secretFile)
				require.Regexp(t, row("frozen", "true"), out)
				ok(t, admin, "incidents", "unfreeze")

				total := okJSON(t, tr.env, "incidents", "list", "--limit", "4")["pagination"].(map[string]any)["total"].(float64)
				r = run(t, tr.env, "incidents", "list", "--limit", "4")
				require.Equal(t, cli.ExitOK, r.code, r.stderr)
				if total > 4 {
					require.Equal(t, fmt.Sprintf("4 of %d incidents shown: --offset 4 for more\n", int(total)), r.stderr)
				} else {
					require.Empty(t, r.stderr, "one page: no hint")
				}
				list := r.stdout
				require.Regexp(t, `^CREATED +KIND +SEVERITY +ACTOR +DETAIL\n`, list)
				require.Regexp(t, regexp.MustCompile(`(?m)^\S+ +freeze +critical +signer:ops +normal → frozen: from a file$`), list)
				require.Regexp(t, regexp.MustCompile(`(?m)^\S+ +unfreeze +info +admin +`), list)
			})
		}

		t.Run("audit: listed in CC, verified, and repaired", func(t *testing.T) {
			waitSequenced(t, sys)
			config := t.TempDir() // where audit verify keeps what it trusts
			for _, tr := range transports(sys) {
				tr.env = with(tr.env, "XDG_CONFIG_HOME", config)
				out := ok(t, tr.env, "audit", "list", "--offset", "8")
				require.Regexp(t, `^SEQ +KIND +AMOUNT +UNIT +SUBJECT +ACTOR +CREATED\n`, out)
				require.Regexp(t, regexp.MustCompile(`(?m)^1 +deposit +995 +cc +\S+ +admin +\S+$`), out, "995 CC, not micro-CC")
				require.Regexp(t, regexp.MustCompile(`(?m)^2 +spread_fee +0\.05 +usd +`), out)
				r := run(t, tr.env, "audit", "verify", "--json")
				require.Equal(t, cli.ExitOK, r.code, r.stderr)
				require.Contains(t, r.stderr, "audit verifier key on first use", "each transport is a server of its own")
				var v map[string]any
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &v), r.stdout)
				require.Equal(t, true, v["valid"])
				require.Equal(t, []any{}, v["repaired_breaks"])
				require.Equal(t, true, v["log"].(map[string]any)["valid"])
				r = run(t, tr.env, "audit", "repair")
				require.Equal(t, cli.ExitFailed, r.code, "an administrator's")
				require.Equal(t, false, okJSON(t, with(tr.env, "FOUNDRY_API_KEY", allinonetest.AdminKey), "audit", "repair")["repaired"])
			}
			rest, grpc := transports(sys)[0].env, transports(sys)[1].env
			require.Equal(t, ok(t, rest, "audit", "list", "--json"), ok(t, grpc, "audit", "list", "--json"))

			// Entry 1 edited while Foundry is stopped.
			sys.Stop()
			cfg := database.Config{DataDir: sys.Storage.DataDir, Schema: "ledger"}
			if engine == database.Postgres {
				cfg = database.Config{URL: sys.Storage.DatabaseURL, Schema: "ledger"}
			}
			db, err := database.Open(context.Background(), cfg)
			require.NoError(t, err)
			_, err = db.Exec(context.Background(), `UPDATE audit_entries SET amount = 1 WHERE seq = 1`)
			require.NoError(t, err)
			db.Close()
			sys.Restart()

			for _, tr := range transports(sys) {
				env := with(tr.env, "XDG_CONFIG_HOME", config)
				// The signed tree holds the entry as it was sequenced, and
				// the client recomputes the leaf of the entry it is shown
				// (amount 1 micro-CC): not the one the log signed, whatever
				// the stored encoding still says. A full walk (an
				// administrator's) finds the columns edited too.
				r := run(t, env, "audit", "verify", "--entry", "1")
				require.Equal(t, cli.ExitFailed, r.code, r.stdout)
				require.Regexp(t, row("log_valid", "false"), r.stdout)
				require.Regexp(t, row("log_entry_1", "NOT INCLUDED: not in the log as signed: the entry as the server shows it "+
					"does not hash to the leaf the signed tree holds (it was changed after it was sequenced)"), r.stdout)
				require.Contains(t, r.stderr, "audit entry 1: not in the log as signed")

				r = run(t, env, "audit", "verify", "--full", "--json")
				require.Equal(t, cli.ExitFailed, r.code, "an administrator's: %s", r.stderr)
				r = run(t, with(env, "FOUNDRY_API_KEY", allinonetest.AdminKey), "audit", "verify", "--full", "--json")
				require.Equal(t, cli.ExitFailed, r.code, tr.name)
				require.Contains(t, r.stdout, `"valid":false`, "the answer is printed")
				require.Contains(t, r.stdout, `"log":{"valid":true,`, "the signed log is sound")
				require.Equal(t, "foundry: the audit chain is broken at seq 1 (entry fields do not match their stored encoding): "+
					"an administrator can record the break with foundry audit repair\n", r.stderr)
			}
			rep := okJSON(t, with(transports(sys)[0].env, "FOUNDRY_API_KEY", allinonetest.AdminKey), "audit", "repair")
			require.Equal(t, true, rep["repaired"])
			require.Equal(t, map[string]any{"repair_seq": rep["repair_entry"].(map[string]any)["seq"], "from_seq": 1.0, "to_seq": 1.0,
				"reason": "entry fields do not match their stored encoding"}, rep["repaired_break"])
			waitSequenced(t, sys)
			for _, tr := range transports(sys) {
				out := ok(t, with(tr.env, "XDG_CONFIG_HOME", config, "FOUNDRY_API_KEY", allinonetest.AdminKey), "audit", "verify", "--full")
				require.Regexp(t, row("valid", "true"), out)
				require.Regexp(t, `(?m)^repaired_breaks +\[\{"repair_seq":\d+,"from_seq":1,"to_seq":1,`, out)
				require.Regexp(t, `(?m)^log_previous +tree size \d+, root \S+, verified \S+: extended \(consistency proven\)$`, out)
			}
		})
	})
}
