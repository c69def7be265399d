package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// okID runs the client with -o id -q and returns the one id it prints.
func okID(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	out := ok(t, env, append(args, "-o", "id", "-q")...)
	require.Regexp(t, `^\S+\n$`, out, "one id: foundry %s", strings.Join(args, " "))
	return strings.TrimSuffix(out, "\n")
}

// okIDs runs the client with -o id -q and returns the ids it prints.
func okIDs(t *testing.T, env map[string]string, args ...string) []string {
	t.Helper()
	return strings.Fields(ok(t, env, append(args, "-o", "id", "-q")...))
}

// readConfig returns the config file's settings, requiring it readable by
// its owner alone.
func readConfig(t *testing.T, path string) map[string]any {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "it holds a token")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var settings map[string]any
	require.NoError(t, json.Unmarshal(raw, &settings))
	return settings
}

// keptToken is the token the config file at path keeps for server ("" for
// none): {"servers": {server: {"token": …}}}.
func keptToken(t *testing.T, path, server string) string {
	t.Helper()
	servers, _ := readConfig(t, path)["servers"].(map[string]any)
	section, _ := servers[server].(map[string]any)
	token, _ := section["token"].(string)
	return token
}

// serverOf names the server env points the client at, as the config file
// keeps tokens under it: the REST URL, or grpc://ADDRESS.
func serverOf(env map[string]string) string {
	if addr := env["FOUNDRY_CLI_GRPC_ADDR"]; addr != "" {
		return "grpc://" + addr
	}
	return env["FOUNDRY_URL"]
}

// TestSession runs a whole session through the CLI alone, over both
// transports, each against a Foundry of its own (so the supply and the
// audit log are the session's): a contributor registers and the session
// is kept in its config file, an administrator deposits for it, it stakes
// on an idea of its own, an operator creates an asset it contributes to
// and distributes the asset's value, a task for the idea is created,
// claimed by a worker and completed (which advances the idea), the
// contributor withdraws, the audit log lists each movement and verifies,
// and the contributor logs out. docs/cli.md shows the same steps.
func TestSession(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		for i, name := range []string{"rest", "grpc"} {
			t.Run(name, func(t *testing.T) {
				sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine), "-rate-poll-interval=0")
				tr := transports(sys)[i]
				require.Equal(t, name, tr.name)
				session(t, sys, tr.name, tr.env)
			})
		}
	})
}

// session is TestSession's walk over the transport env names.
func session(t *testing.T, sys *allinonetest.System, name string, env map[string]string) {
	// Each person has a home of their own, so a config file of their own.
	adaHome, adminHome := t.TempDir(), t.TempDir()
	ada := with(env, "HOME", adaHome)
	admin := with(env, "HOME", adminHome, "FOUNDRY_API_KEY", allinonetest.AdminKey)
	adaConfig := filepath.Join(adaHome, ".config", "foundry", "cli.json")
	handle := "ada-" + name

	// register: the session token is kept in ada's config file, for this
	// server.
	id := okID(t, ada, "register", handle)
	require.Regexp(t, `^[0-9a-f-]{36}$`, id)
	token := keptToken(t, adaConfig, serverOf(env))
	require.Regexp(t, `^[0-9a-f]{64}$`, token)
	who := okJSON(t, ada, "whoami")
	require.Equal(t, "session", who["kind"])
	require.Equal(t, id, who["contributor_id"])
	require.Equal(t, handle, who["handle"])

	r := run(t, ada, "register", "bob-"+name)
	require.Equal(t, cli.ExitUsage, r.code, "the file holds ada's session")
	require.Equal(t, "foundry: "+adaConfig+" already keeps a token for "+serverOf(env)+", which a new session would replace for good: "+
		"foundry logout first, name another file with --config, or give --no-store to print the new token\n"+
		"Run 'foundry register --help' for usage.\n", r.stderr)
	require.Equal(t, token, keptToken(t, adaConfig, serverOf(env)), "left alone")

	// deposit: 10 USD at the buy rate of 99.5 CC per USD.
	rate := okJSON(t, ada, "cc", "rate")
	require.Equal(t, 100.0, rate["cc_per_usd"])
	require.Equal(t, 99.5, rate["buy_rate"])
	require.Equal(t, 100.5, rate["sell_rate"])
	dep := okJSON(t, admin, "cc", "deposit", id, "--usd", "10", "--reference", "wire-"+name)
	require.Equal(t, id, dep["contributor_id"])
	require.Equal(t, 995.0, dep["amount_cc"])
	require.Equal(t, false, dep["duplicate"])
	require.Regexp(t, row("duplicate", "true"), ok(t, admin, "cc", "deposit", id, "--usd", "10", "--reference", "wire-"+name),
		"the same reference deposits once")
	r = run(t, ada, "cc", "deposit", id, "--usd", "10", "--reference", "self-"+name)
	require.Equal(t, cli.ExitFailed, r.code, "a contributor does not mint its own CC")
	require.Equal(t, map[string]any{"contributor_id": id, "contributor_handle": handle, "available_cc": 995.0, "staked_cc": 0.0,
		"cooling_cc": 0.0}, okJSON(t, ada, "cc", "balance"))

	// stake on an idea ada created.
	idea := okID(t, ada, "ideas", "create", "Solar kettle "+name, "--value", "100", "--cost", "10")
	stake := okJSON(t, ada, "cc", "stake", idea, "100")
	require.Equal(t, 100.0, stake["position_cc"])
	require.Equal(t, 895.0, stake["available_cc_after"])

	// an asset, ada's contribution to it, and its value distributed.
	asset := okID(t, admin, "assets", "create", "kettle-firmware-"+name, "--type", "CODE", "--description", "the timer")
	contribution := okID(t, ada, "contributions", "create", "--asset", asset, "--cost", "12.5", "--metadata", `{"has_tests": true}`)
	c := okJSON(t, ada, "contributions", "show", contribution)
	require.Equal(t, id, c["contributor_id"], "the session's contributor")
	require.Equal(t, asset, c["asset_id"])
	require.Equal(t, 12.5, c["cost_amount"])
	require.Equal(t, handle, c["contributor_handle"], "named by handle too")
	require.Regexp(t, regexp.MustCompile(`(?m)^`+contribution+` +`+handle+` +`+asset+` +12.5 `), ok(t, ada, "contributions", "list"),
		"the table names the contributor by handle")
	require.Equal(t, []string{contribution}, okIDs(t, ada, "contributions", "list"), "the session's contributions")
	require.Equal(t, []string{contribution}, okIDs(t, ada, "contributions", "list", "--asset", asset))
	shown := okJSON(t, ada, "assets", "show", asset)
	require.Equal(t, "CODE", shown["type"])
	require.Equal(t, 12.5, shown["total_cost"])
	require.Equal(t, 1.0, shown["contribution_count"])
	require.Equal(t, []string{asset}, okIDs(t, ada, "assets", "list"))

	distribution := okID(t, admin, "distributions", "create", "--asset", asset, "--value", "100")
	out := ok(t, ada, "distributions", "show", distribution)
	require.Regexp(t, row("value_amount", "100"), out)
	require.Regexp(t, row("payout_count", "1"), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^CONTRIBUTOR +AMOUNT\n`+handle+` +100$`), out, "all of it to ada, the one contributor, by handle")
	require.Equal(t, []string{distribution}, okIDs(t, ada, "distributions", "list", "--asset", asset))

	// contributors: ada by handle, with the CC she holds.
	require.Equal(t, []string{id}, okIDs(t, ada, "contributors", "list", "--handle", handle))
	require.Regexp(t, regexp.MustCompile(`(?m)^ID +HANDLE +TRUST +AVAILABLE_CC +STAKED_CC +COOLING_CC +CREATED\n`+id+` +`+handle+` +tofu +895 +100 +0 `),
		ok(t, ada, "contributors", "list", "--handle", handle))

	// a task for the idea, claimed and completed by a worker.
	workerToken := strings.TrimSpace(ok(t, admin, "tokens", "create", "worker-"+name, "--role", "worker", "-q"))
	require.Regexp(t, `^fdt_[0-9a-f]{64}$`, workerToken)
	worker := with(env, "HOME", t.TempDir(), "FOUNDRY_TOKEN", workerToken)
	task := okID(t, admin, "tasks", "create", "add a timer to the kettle", "--type", "impl", "--idea", idea)
	require.Equal(t, task, okID(t, worker, "tasks", "claim", "--worker", "w-"+name, "--type", "impl"))
	done := okJSON(t, worker, "tasks", "complete", task, "--worker", "w-"+name, "--output", "timer added")
	require.Equal(t, "completed", done["status"])
	shownTask := okJSON(t, ada, "tasks", "show", task)
	require.Equal(t, "completed", shownTask["status"])
	require.Equal(t, "timer added", shownTask["output"])
	require.Equal(t, map[string]any{"idea_id": idea}, shownTask["context"])
	require.Eventually(t, func() bool {
		return okJSON(t, ada, "ideas", "show", idea)["stage"] == "specced"
	}, 10*time.Second, 50*time.Millisecond, "a completed impl task advances its idea one stage")

	// withdraw 95 CC at the sell rate of 100.5.
	w := okJSON(t, ada, "cc", "withdraw", "95")
	require.Equal(t, 95.0, w["amount_cc"])
	require.Equal(t, 100.5, w["sell_rate"])
	require.Equal(t, 0.945273, w["amount_usd"], "95 / 100.5, rounded down to the micro-USD")
	require.Equal(t, map[string]any{"contributor_id": id, "contributor_handle": handle, "available_cc": 800.0, "staked_cc": 100.0,
		"cooling_cc": 0.0}, okJSON(t, ada, "cc", "balance"))
	supply := okJSON(t, ada, "cc", "supply")
	require.Equal(t, 900.0, supply["total_cc_outstanding"], "995 minted, 95 burnt")
	require.Equal(t, "healthy", supply["status"])

	// the audit log: each movement listed, the log verified.
	waitSequenced(t, sys)
	entries := okJSON(t, ada, "audit", "list")["entries"].([]any)
	var kinds []string
	for _, en := range entries {
		kinds = append(kinds, en.(map[string]any)["kind"].(string))
	}
	for _, kind := range []string{"deposit", "stake", "withdraw"} {
		require.Contains(t, kinds, kind)
	}
	require.Regexp(t, regexp.MustCompile(`(?m)^\d+ +stake +100 +cc +`+regexp.QuoteMeta(handle)+` +`+regexp.QuoteMeta(handle)+` +\S+$`),
		ok(t, ada, "audit", "list"), "the table names ada by handle")
	seqs := okIDs(t, ada, "audit", "list")
	require.Len(t, seqs, len(entries), "a seq per entry")
	require.Equal(t, entries[0].(map[string]any)["seq"], mustFloat(t, seqs[0]), "newest first")
	r = run(t, ada, "audit", "verify", "--entry", seqs[0], "-q")
	require.Equal(t, cli.ExitOK, r.code, r.stderr)
	require.Empty(t, r.stderr, "-q: no trust-on-first-use notice")
	require.Regexp(t, row("valid", "true"), r.stdout)
	require.Regexp(t, row("log_valid", "true"), r.stdout)
	require.Regexp(t, row("log_entry_"+seqs[0], "included"), r.stdout)

	// logout: the session is revoked and forgotten by the file.
	r = run(t, ada, "logout")
	require.Equal(t, cli.ExitOK, r.code, r.stderr)
	require.Regexp(t, row("revoked", "true"), r.stdout)
	require.Equal(t, "the token is removed from "+adaConfig+"\n", r.stderr)
	require.Equal(t, map[string]any{}, readConfig(t, adaConfig), "no token, for any server")
	require.Equal(t, "anonymous", okJSON(t, ada, "whoami")["kind"])
}

// mustFloat is s as the JSON number it was.
func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	require.NoError(t, json.Unmarshal([]byte(s), &f))
	return f
}
