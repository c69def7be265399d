package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// keygen runs foundry audit keygen and returns the signing key and the
// verifier key it printed.
func keygen(t *testing.T, args ...string) (skey, vkey string) {
	t.Helper()
	out := ok(t, nil, append([]string{"audit", "keygen"}, args...)...)
	m := regexp.MustCompile(`^FOUNDRY_AUDIT_SIGNING_KEY=(PRIVATE\+KEY\+\S+)\n# verifier key: (\S+)\n$`).FindStringSubmatch(out)
	require.NotNil(t, m, "%q", out)
	return m[1], m[2]
}

// auditSigningKey is a new audit signing key, for a system whose ledger is
// restarted and must keep signing with the same key.
func auditSigningKey(t *testing.T) string {
	t.Helper()
	skey, _ := keygen(t)
	return skey
}

// waitSequenced waits until the ledger's sequencer has signed every
// movement's audit entry into the log. The answer must be the same twice:
// one verification reads the checkpoint before the backlog, so a batch
// that commits between the two reads shows the old size with no backlog.
func waitSequenced(t *testing.T, sys *allinonetest.System) {
	t.Helper()
	last := -1
	require.Eventually(t, func() bool {
		var v struct {
			Unsequenced int `json:"unsequenced_entries"`
			TreeSize    int `json:"tree_size"`
		}
		if json.Unmarshal([]byte(rawGET(t, sys, "/api/audit/verify")), &v) != nil || v.Unsequenced != 0 || v.TreeSize == 0 {
			last = -1
			return false
		}
		done := v.TreeSize == last
		last = v.TreeSize
		return done
	}, 10*time.Second, 20*time.Millisecond)
}

func TestAuditKeygen(t *testing.T) {
	t.Parallel()
	skey, vkey := keygen(t)
	s, err := note.NewSigner(skey)
	require.NoError(t, err)
	require.Equal(t, "foundry-audit", s.Name())
	v, err := note.NewVerifier(vkey)
	require.NoError(t, err)
	msg, err := note.Sign(&note.Note{Text: "x\n"}, s)
	require.NoError(t, err)
	_, err = note.Open(msg, note.VerifierList(v))
	require.NoError(t, err, "the verifier key is the signing key's")

	other, _ := keygen(t, "--name", "acme-ledger")
	require.True(t, strings.HasPrefix(other, "PRIVATE+KEY+acme-ledger+"), other)
	require.NotEqual(t, skey, auditSigningKey(t), "a new key each time")

	doc := okJSON(t, nil, "audit", "keygen")
	require.Regexp(t, `^PRIVATE\+KEY\+foundry-audit\+`, doc["signing_key"])
	require.Regexp(t, `^foundry-audit\+[0-9a-f]{8}\+`, doc["verifier_key"])

	for _, name := range []string{"", "a b", "a+b"} {
		r := run(t, nil, "audit", "keygen", "--name", name)
		require.Equal(t, cli.ExitUsage, r.code, name)
		require.Contains(t, r.stderr, "a key's name is not empty and has no spaces, control characters or +")
		require.Empty(t, r.stdout)
	}
}

// TestAuditLog: the signed checkpoint printed as served, and verified by
// the client over both transports: the key trusted on first use and kept,
// the log's growth proven consistent, entries proven included, a key
// change refused until --key confirms it.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		skey, vkey := keygen(t)
		storage := allinonetest.NewStorage(t, engine)
		// Fixed addresses: the state audit verify keeps is the address's,
		// and Foundry is started again below with another key.
		flags := []string{"-rate-poll-interval=0", "-http-addr=" + allinonetest.FreeAddr(t), "-grpc-addr=" + allinonetest.FreeAddr(t)}
		sys := allinonetest.Start(t, storage, append(flags, "-audit-signing-key="+skey)...)
		config := t.TempDir()
		reg := api(t, sys, http.MethodPost, "/api/onboarding/register", map[string]any{"handle": "ada"}, http.StatusCreated)
		deposit := func(sys *allinonetest.System, ref string) {
			api(t, sys, http.MethodPost, "/api/cc/deposit", map[string]any{"contributor_id": reg["contributor_id"], "amount_usd": 10,
				"reference": ref}, http.StatusCreated)
		}
		deposit(sys, "wire-1")
		waitSequenced(t, sys)

		t.Run("checkpoint: the signed note as served", func(t *testing.T) {
			served := rawGET(t, sys, "/api/audit/checkpoint")
			require.Regexp(t, `^foundry-audit\n3\n\S{44}\n\n— foundry-audit \S+\n$`, served, "genesis, a deposit and its fee")
			for _, tr := range transports(sys) {
				require.Equal(t, served, ok(t, tr.env, "audit", "checkpoint"), tr.name)
				require.Equal(t, map[string]any{"note": served}, okJSON(t, tr.env, "audit", "checkpoint"), tr.name)
			}
			require.Equal(t, vkey+"\n", rawGET(t, sys, "/api/audit/verifier-key"))
		})

		for _, tr := range transports(sys) {
			env := with(tr.env, "XDG_CONFIG_HOME", config)
			t.Run("verify over "+tr.name, func(t *testing.T) {
				r := run(t, env, "audit", "verify")
				require.Equal(t, cli.ExitOK, r.code, r.stderr)
				require.Regexp(t, `^trusting \S+'s audit verifier key on first use: `+regexp.QuoteMeta(vkey)+`\n`+
					`  \(compare it with the one its operator publishes; it is kept in `+regexp.QuoteMeta(config)+`/foundry/audit/\S+\.json\)\n$`,
					r.stderr)
				require.Regexp(t, row("valid", "true"), r.stdout)
				require.Regexp(t, row("log_valid", "true"), r.stdout)
				require.Regexp(t, regexp.MustCompile(`(?m)^log_checkpoint +foundry-audit, tree size \d+, root \S+$`), r.stdout)
				require.Regexp(t, row("log_verifier_key", vkey+" (trusted on first use)"), r.stdout)
				require.Regexp(t, row("log_previous", "-"), r.stdout)

				deposit(sys, "wire-2-"+tr.name)
				waitSequenced(t, sys)
				out := ok(t, env, "audit", "verify", "--entry", "1", "--entry", "4")
				require.Regexp(t, row("log_verifier_key", vkey+" (trusted before)"), out)
				require.Regexp(t, regexp.MustCompile(`(?m)^log_previous +tree size \d+, root \S+, verified \S+: extended \(consistency proven\)$`), out)
				require.Regexp(t, row("log_entry_1", "included"), out)
				require.Regexp(t, row("log_entry_4", "included"), out)
				require.Regexp(t, regexp.MustCompile(`(?m)^log_previous +tree size \d+, root \S+, verified \S+: unchanged$`),
					ok(t, env, "audit", "verify"), "nothing sequenced since")

				doc := okJSON(t, env, "audit", "verify", "--entry", "2")
				log := doc["log"].(map[string]any)
				require.Equal(t, true, log["valid"])
				require.Nil(t, log["reason"])
				require.Equal(t, "stored", log["key_trust"])
				require.Equal(t, doc["tree_size"], log["tree_size"], "the ledger verified the checkpoint this client did")
				require.Equal(t, doc["root_hash"], log["root_hash"])
				entry := log["entries"].([]any)[0].(map[string]any)
				require.Equal(t, 2.0, entry["seq"])
				require.Equal(t, true, entry["included"])
				require.Regexp(t, `^\S{44}$`, entry["leaf_hash"])

				r = run(t, env, "audit", "verify", "--entry", "99")
				require.Equal(t, cli.ExitFailed, r.code)
				require.Regexp(t, `(?m)^log_entry_99 +NOT INCLUDED: not covered by the signed checkpoint \(tree size \d+ covers seq 1 to \d+\)`, r.stdout)
				require.Contains(t, r.stderr, "foundry: audit entry 99: not covered by the signed checkpoint")
			})
		}
		files, err := filepath.Glob(filepath.Join(config, "foundry", "audit", "*.json"))
		require.NoError(t, err)
		require.Len(t, files, 2, "one state per server address")
		info, err := os.Stat(files[0])
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

		t.Run("usage", func(t *testing.T) {
			env := with(transports(sys)[0].env, "XDG_CONFIG_HOME", config)
			for _, c := range []struct {
				env  map[string]string
				args []string
				want string
			}{
				{env, []string{"--entry", "0"}, "foundry: --entry 0 is not an entry's seq (from 1)\n"},
				{env, []string{"--key", "nonsense"}, "foundry: --key is not a note verifier key"},
				{transports(sys)[0].env, nil, "foundry: audit verify keeps the key and checkpoint it trusts in " +
					"$XDG_CONFIG_HOME/foundry/audit or ~/.config/foundry/audit: set HOME or XDG_CONFIG_HOME\n"},
			} {
				r := run(t, c.env, append([]string{"audit", "verify"}, c.args...)...)
				require.Equal(t, cli.ExitUsage, r.code, "%v: %s", c.args, r.stderr)
				require.True(t, strings.HasPrefix(r.stderr, c.want), "%v: %q", c.args, r.stderr)
				require.Empty(t, r.stdout)
			}
		})

		newSkey, newVkey := keygen(t)
		t.Run("a new signing key is refused until --key confirms it", func(t *testing.T) {
			sys.Stop()
			// The rotation, as an operator configures it: the ledger is
			// given the old key's verifier key, so it takes the checkpoints
			// the old key signed and signs on with the new one.
			sys := allinonetest.Start(t, storage, append(flags, "-audit-signing-key="+newSkey, "-audit-previous-verifier-keys="+vkey)...)
			deposit(sys, "wire-3")
			waitSequenced(t, sys)
			for _, tr := range transports(sys) {
				env := with(tr.env, "XDG_CONFIG_HOME", config)
				r := run(t, env, "audit", "verify")
				require.Equal(t, cli.ExitFailed, r.code, r.stderr)
				require.Regexp(t, "^foundry: the server's audit verifier key changed from "+regexp.QuoteMeta(vkey+" to "+newVkey)+
					` at seq \d+ without the old key's countersignature, so this client cannot follow it by signature`, r.stderr,
					"the ledger was given only the old verifier key: the change is recorded, not countersigned")
				require.Contains(t, r.stderr, "run again with --key "+newVkey+"\n")
				require.Regexp(t, row("log_valid", "false"), r.stdout)

				r = run(t, env, "audit", "verify", "--key", vkey)
				require.Equal(t, cli.ExitFailed, r.code, r.stderr)
				require.Contains(t, r.stderr, "foundry: the audit checkpoint is not signed by the trusted key foundry-audit (key hash ")

				out := ok(t, env, "audit", "verify", "--key", newVkey)
				require.Regexp(t, row("log_verifier_key", newVkey+" (given with --key)"), out)
				require.Regexp(t, regexp.MustCompile(`(?m)^log_previous +.*: extended \(consistency proven\)$`), out,
					"the new key's checkpoints extend the history the old one signed")
				out = ok(t, env, "audit", "verify")
				require.Regexp(t, row("log_verifier_key", newVkey+" (trusted before)"), out, "--key replaced the trusted key")
			}
		})

		t.Run("a change countersigned by the old key is followed", func(t *testing.T) {
			// The rotation with the old signing key given: the ledger
			// records the change countersigned by it, and a client that
			// trusts the old key follows it without --key.
			newerSkey, newerVkey := keygen(t)
			sys := allinonetest.Start(t, storage, append(flags, "-audit-signing-key="+newerSkey,
				"-audit-previous-signing-key="+newSkey)...)
			deposit(sys, "wire-4")
			waitSequenced(t, sys)
			changes := api(t, sys, http.MethodGet, "/api/audit/key-changes", nil, http.StatusOK)["key_changes"].([]any)
			require.Len(t, changes, 2)
			first, second := changes[0].(map[string]any), changes[1].(map[string]any)
			require.Equal(t, []any{vkey, newVkey, false}, []any{first["from_key"], first["to_key"], first["countersigned"]},
				"the rotation given only the old verifier key")
			require.Equal(t, []any{newVkey, newerVkey, true}, []any{second["from_key"], second["to_key"], second["countersigned"]})
			seq := int(second["seq"].(float64))
			for _, tr := range transports(sys) {
				env := with(tr.env, "XDG_CONFIG_HOME", config)
				r := run(t, env, "audit", "verify")
				require.Equal(t, cli.ExitOK, r.code, r.stderr)
				require.Regexp(t, `^following \S+'s change of audit key`, r.stderr)
				require.Contains(t, r.stderr, "'s change of audit key, countersigned by the key this client trusted: now trusting "+
					newerVkey+"\n")
				require.Regexp(t, row("log_verifier_key", fmt.Sprintf("%s (followed the log's countersigned key change at seq %d from %s)",
					newerVkey, seq, newVkey)), r.stdout)
				require.Regexp(t, regexp.MustCompile(`(?m)^log_previous +.*: extended \(consistency proven\)$`), r.stdout)
				out := ok(t, env, "audit", "verify")
				require.Regexp(t, row("log_verifier_key", newerVkey+" (trusted before)"), out, "the followed key is kept")
			}
		})
	})
}
