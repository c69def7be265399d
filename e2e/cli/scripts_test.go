package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestOutputFormats: -o json is --json, -o id prints the ids of what was
// created or listed (none for nothing), -q keeps hints and progress off
// stderr; over both transports.
func TestOutputFormats(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine))
		for _, tr := range transports(sys) {
			t.Run(tr.name, func(t *testing.T) {
				admin := with(tr.env, "FOUNDRY_API_KEY", allinonetest.AdminKey)
				mine := "fmt-" + tr.name // the tasks of this transport's run
				var created []string
				for i := range 3 {
					created = append(created, okID(t, admin, "tasks", "create", fmt.Sprintf("review %s %d", tr.name, i), "--type", "review",
						"--idea", mine))
				}
				require.Equal(t, ok(t, tr.env, "tasks", "list", "--json"), ok(t, tr.env, "tasks", "list", "-o", "json"), "--json is -o json")
				require.Equal(t, ok(t, tr.env, "tasks", "list"), ok(t, tr.env, "tasks", "list", "-o", "table"), "table is the default")

				// Ids in the list's order, newest first; --all merges the pages.
				want := []string{created[2], created[1], created[0]}
				require.Equal(t, want, okIDs(t, tr.env, "tasks", "list", "--idea", mine, "--limit", "3"))
				require.Equal(t, want, okIDs(t, tr.env, "tasks", "list", "--idea", mine, "--limit", "1", "--all"))
				var fromJSON []string
				for _, it := range okJSON(t, tr.env, "tasks", "list", "--idea", mine)["tasks"].([]any) {
					fromJSON = append(fromJSON, it.(map[string]any)["id"].(string))
				}
				require.Equal(t, fromJSON, okIDs(t, tr.env, "tasks", "list", "--idea", mine), "the JSON's ids")
				require.Equal(t, created[0], okID(t, tr.env, "tasks", "show", created[0]))

				// A claim answers {"task": ...}: its id, or nothing at all.
				secret := strings.TrimSpace(ok(t, admin, "tokens", "create", "fmt-"+tr.name, "--role", "worker", "-q"))
				worker := with(tr.env, "FOUNDRY_TOKEN", secret)
				claimed := okIDs(t, worker, "tasks", "claim", "--worker", "w", "--type", "review")
				require.Equal(t, []string{created[0]}, claimed, "the oldest")
				okIDs(t, worker, "tasks", "claim", "--worker", "w", "--type", "review")
				okIDs(t, worker, "tasks", "claim", "--worker", "w", "--type", "review")
				require.Empty(t, ok(t, worker, "tasks", "claim", "--worker", "w", "--type", "review", "-o", "id"), "no task, no id")
				require.Equal(t, created[0], okID(t, worker, "tasks", "complete", created[0], "--worker", "w", "--output", "built"),
					"-o is the format, --output the task's output")
				require.Equal(t, "built", okJSON(t, tr.env, "tasks", "show", created[0])["output"])

				// A seq is an audit entry's id; an API token's is api_token.id.
				tokenID := okID(t, admin, "tokens", "create", "ids-"+tr.name, "--role", "viewer")
				require.Regexp(t, `^[0-9a-f-]{36}$`, tokenID)
				require.Contains(t, okIDs(t, admin, "tokens", "list"), tokenID)

				// Hints and progress: shown, unless -q.
				r := run(t, tr.env, "tasks", "list", "--idea", mine, "--limit", "1")
				require.Equal(t, cli.ExitOK, r.code)
				require.Equal(t, "1 of 3 tasks shown: --offset 1 or --all for more\n", r.stderr)
				r = run(t, tr.env, "tasks", "list", "--idea", mine, "--limit", "1", "-q")
				require.Equal(t, cli.ExitOK, r.code)
				require.Empty(t, r.stderr, "-q")
				require.Regexp(t, `^ID +TYPE +STATUS +PROGRESS +DIRECTION\n\S+ +review +`, r.stdout, "the answer is the same")
				r = runOn(t, &terminal{}, tr.env, "tasks", "list", "--idea", mine, "--limit", "1", "--all", "--quiet")
				require.Equal(t, cli.ExitOK, r.code)
				require.Empty(t, r.stderr, "no progress on a terminal either")
				require.Equal(t, 4, strings.Count(r.stdout, "\n"), "a header and three rows: %s", r.stdout)
				r = run(t, admin, "tokens", "create", "quiet-"+tr.name, "--role", "viewer", "-q")
				require.Equal(t, cli.ExitOK, r.code)
				require.Regexp(t, `^fdt_[0-9a-f]{64}\n$`, r.stdout)
				require.Empty(t, r.stderr, "the token's details are a hint")
				r = run(t, tr.env, "ideas", "show", "nope", "-q")
				require.Equal(t, cli.ExitFailed, r.code)
				require.Equal(t, "foundry: idea nope not found\n", r.stderr, "errors are not hints")
			})
		}
	})
}

// TestOutputUsage: a format that cannot be given is a usage error found
// before anything is sent.
func TestOutputUsage(t *testing.T) {
	t.Parallel()
	// Nothing listens here: exit 2, not 3, shows nothing was sent.
	env := map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ideas", "list", "-o", "yaml"}, "foundry: invalid argument \"yaml\" for \"-o, --format\" flag: must be one of json, table, id\n"},
		{[]string{"ideas", "list", "--json", "-o", "table"}, "foundry: --json and -o table ask for two formats: give one\n"},
		{[]string{"ideas", "list", "--json", "-o", "id"}, "foundry: --json and -o id ask for two formats: give one\n"},
		{[]string{"cc", "supply", "-o", "id"}, "foundry: foundry cc supply prints no ids: -o id is for the commands that create, show or list " +
			"something with an id; use -o json\n"},
		{[]string{"cc", "deposit", "c", "--usd", "1", "--reference", "r", "-o", "id"}, "foundry: foundry cc deposit prints no ids: "},
		{[]string{"status", "-o", "id"}, "foundry: foundry status prints no ids: "},
		{[]string{"version", "-o", "id"}, "foundry: foundry version prints no ids: "},
	} {
		r := run(t, env, tc.args...)
		require.Equal(t, cli.ExitUsage, r.code, "%v: %s", tc.args, r.stderr)
		require.Empty(t, r.stdout, tc.args)
		require.True(t, strings.HasPrefix(r.stderr, tc.want), "%v: %q", tc.args, r.stderr)
	}
	// -o json with --json agrees: not a conflict.
	r := run(t, env, "ideas", "list", "--json", "-o", "json")
	require.Equal(t, cli.ExitUnavailable, r.code, "it went on to call: %s", r.stderr)
}

// TestVocabularies: the words the client accepts for the API's open
// vocabularies (strings in the protos: task types, failure categories,
// token roles, asset types) are the words the API's own refusal names,
// word for word and in order; another word is refused before any request
// (exit 2), with the API's message.
func TestVocabularies(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	task := api(t, sys, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "x", "task_type": "impl"}, http.StatusCreated)["id"].(string)
	dead := map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t), "FOUNDRY_API_KEY": allinonetest.AdminKey}
	for _, tc := range []struct {
		name   string
		args   []string
		flag   string
		method string
		path   string
		body   map[string]any
		field  string
	}{
		{"task types", []string{"tasks", "create", "x", "--type", "bogus"}, "--type",
			http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "x", "task_type": "bogus"}, "task_type"},
		{"failure categories", []string{"tasks", "fail", task, "--error", "e", "--category", "bogus"}, "--category",
			http.MethodPatch, "/api/agent/tasks/" + task, map[string]any{"status": "failed", "error_summary": "e", "error_category": "bogus"}, "error_category"},
		{"token roles", []string{"tokens", "create", "x", "--role", "bogus"}, "--role",
			http.MethodPost, "/api/tokens", map[string]any{"name": "x", "role": "bogus"}, "role"},
		{"asset types", []string{"assets", "create", "x", "--type", "bogus"}, "--type",
			http.MethodPost, "/api/assets", map[string]any{"name": "x", "type": "bogus"}, "type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusal := api(t, sys, tc.method, tc.path, tc.body, http.StatusUnprocessableEntity)
			var message string
			for _, e := range refusal["errors"].([]any) {
				if f := e.(map[string]any); f["field"] == tc.field {
					message = f["message"].(string)
				}
			}
			require.True(t, strings.HasPrefix(message, "must be one of "), "%v", refusal)

			r := run(t, dead, tc.args...)
			require.Equal(t, cli.ExitUsage, r.code, r.stderr)
			require.Equal(t, fmt.Sprintf("foundry: invalid argument \"bogus\" for \"%s\" flag: %s\n", tc.flag, message),
				strings.SplitAfter(r.stderr, "\n")[0])
		})
	}
	// The same lists filter the lists and claims.
	for _, args := range [][]string{{"tasks", "list", "--type", "bogus"}, {"tasks", "claim", "--worker", "w", "--type", "impl", "--type", "bogus"}} {
		r := run(t, dead, args...)
		require.Equal(t, cli.ExitUsage, r.code, r.stderr)
		require.Contains(t, r.stderr, `invalid argument "bogus" for "--type" flag: must be one of spec, impl, test, review, heal, code-review, `)
	}
}

// TestAPI: foundry api sends any route with the configured credential and
// prints the answer as it came, exiting by its status.
func TestAPI(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite), "-rate-poll-interval=0")
	env := map[string]string{"FOUNDRY_URL": sys.BaseURL}
	admin := with(env, "FOUNDRY_API_KEY", allinonetest.AdminKey)

	require.Equal(t, rawGET(t, sys, "/api/cc/exchange-rate")+"\n", ok(t, env, "api", "GET", "/api/cc/exchange-rate"), "the answer's bytes")
	require.Equal(t, ok(t, env, "api", "GET", "/api/cc/exchange-rate"), ok(t, env, "api", "get", "cc/exchange-rate"), "/api may be left out")

	out := ok(t, admin, "api", "POST", "/api/ideas", "-d", `{"name": "Wind sock", "potential_value": 50}`)
	var idea map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &idea))
	require.Equal(t, "Wind sock", idea["name"])
	require.Equal(t, "Wind sock", okJSON(t, env, "ideas", "show", idea["id"].(string))["name"])

	body := filepath.Join(t.TempDir(), "body.json")
	require.NoError(t, os.WriteFile(body, []byte(`{"name": "From a file"}`), 0o600))
	require.Contains(t, ok(t, admin, "api", "POST", "ideas", "-d", "@"+body), `"name":"From a file"`)
	require.Contains(t, ok(t, env, "api", "GET", "/api/ideas?limit=1"), `"pagination":{"limit":1,`)

	r := run(t, env, "api", "GET", "/api/ideas/nope")
	require.Equal(t, cli.ExitFailed, r.code)
	require.Equal(t, `{"detail":"idea nope not found"}`+"\n", r.stdout, "the error's body, as it came")
	require.Equal(t, "foundry: idea nope not found\n", r.stderr)

	r = run(t, env, "api", "POST", "/api/ideas", "-d", `{"name": "x"}`)
	require.Equal(t, cli.ExitFailed, r.code, "the same credential rules as every command")
	require.Contains(t, r.stderr, "(no credential is set: ")

	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env, []string{"api", "FETCH", "/api/ideas"}, "foundry: METHOD \"FETCH\": must be one of GET, POST, PUT, PATCH, DELETE\n"},
		{env, []string{"api", "POST", "/api/ideas", "-d", "{name: x}"}, "foundry: -d is not JSON: "},
		{env, []string{"api", "GET", "http://elsewhere/api/ideas"}, "foundry: PATH \"http://elsewhere/api/ideas\": give the route"},
		{with(env, "FOUNDRY_CLI_GRPC_ADDR", sys.GRPCAddr, "FOUNDRY_CLI_SERVICE_KEY", allinonetest.ServiceKey),
			[]string{"api", "GET", "/api/ideas"}, "foundry: api sends REST requests: point it at the gateway with --url, not --grpc-addr\n"},
	} {
		r := run(t, tc.env, tc.args...)
		require.Equal(t, cli.ExitUsage, r.code, "%v: %s", tc.args, r.stderr)
		require.Empty(t, r.stdout)
		require.True(t, strings.HasPrefix(r.stderr, tc.want), "%v: %q", tc.args, r.stderr)
	}
	r = run(t, map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}, "api", "GET", "/api/ready")
	require.Equal(t, cli.ExitUnavailable, r.code)
	require.Contains(t, r.stderr, "foundry: cannot reach Foundry at ")
}

// TestVersion: the binary's build, from what the toolchain recorded;
// nothing is sent.
func TestVersion(t *testing.T) {
	t.Parallel()
	env := map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}
	doc := okJSON(t, env, "version")
	require.Equal(t, runtime.Version(), doc["go"])
	for _, key := range []string{"module", "version", "revision", "time", "modified"} {
		require.Contains(t, doc, key, "every field present, null when not recorded")
	}
	out := ok(t, env, "version")
	require.Regexp(t, row("go", runtime.Version()), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^revision +(-|[0-9a-f]{40})$`), out, "a commit, or - when none was recorded")
}

// TestRegister: where register keeps the session token, and when it
// refuses to (before anything is sent).
func TestRegister(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	env := map[string]string{"FOUNDRY_URL": sys.BaseURL}

	t.Run("no file to keep it in: refused, or --no-store prints it", func(t *testing.T) {
		r := run(t, env, "register", "nohome")
		require.Equal(t, cli.ExitUsage, r.code)
		require.True(t, strings.HasPrefix(r.stderr, "foundry: there is no config file to keep the session token in "+
			"(HOME and XDG_CONFIG_HOME are unset): name one with --config, or give --no-store to print the token\n"), r.stderr)
		r = run(t, env, "register", "nohome", "--config=")
		require.Equal(t, cli.ExitUsage, r.code)
		require.Contains(t, r.stderr, "foundry: --config= names no config file to keep the session token in")

		out := ok(t, env, "register", "nohome", "--no-store")
		require.Regexp(t, row("handle", "nohome"), out, "the handle was free: nothing was sent before")
		require.Regexp(t, regexp.MustCompile(`(?m)^session_token +[0-9a-f]{64}$`), out, "shown, since nothing keeps it")
		doc := okJSON(t, env, "register", "nohome-2", "--no-store")
		require.Regexp(t, `^[0-9a-f]{64}$`, doc["session_token"])
		require.Equal(t, "tofu", doc["trust_level"])
	})

	t.Run("--config names the file; its other settings stay", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "team.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"url": "`+sys.BaseURL+`"}`), 0o644))
		r := run(t, nil, "register", "configured", "--config", path)
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Regexp(t, row("handle", "configured"), r.stdout)
		require.NotContains(t, r.stdout, "session_token", "the file keeps it")
		require.Equal(t, "session token kept in "+path+" for "+sys.BaseURL+": the commands that follow act as configured there\n", r.stderr)
		settings := readConfig(t, path)
		require.Equal(t, sys.BaseURL, settings["url"])
		token := keptToken(t, path, sys.BaseURL)
		require.Regexp(t, `^[0-9a-f]{64}$`, token)
		require.Equal(t, "configured", okJSON(t, map[string]string{"FOUNDRY_CLI_CONFIG": path}, "whoami")["handle"])

		// A token the environment gives is the shell's: logout leaves the file alone.
		r = run(t, map[string]string{"FOUNDRY_CLI_CONFIG": path, "FOUNDRY_TOKEN": token}, "logout")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Empty(t, r.stderr)
		require.Equal(t, settings, readConfig(t, path))
	})

	t.Run("a token set elsewhere wins over the file, and it says so", func(t *testing.T) {
		home := t.TempDir()
		r := run(t, with(env, "HOME", home, "FOUNDRY_TOKEN", "fdt_other"), "register", "shadowed")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Equal(t, "session token kept in "+filepath.Join(home, ".config", "foundry", "cli.json")+" for "+sys.BaseURL+
			": the commands that follow act as shadowed there\n"+
			"(but FOUNDRY_TOKEN is set and wins over the file: unset it to act as shadowed)\n", r.stderr)
	})

	t.Run("a refused handle keeps nothing", func(t *testing.T) {
		home := t.TempDir()
		r := run(t, with(env, "HOME", home), "register", "No Spaces")
		require.Equal(t, cli.ExitFailed, r.code)
		require.Contains(t, r.stderr, "handle: must match [a-z0-9_-]{3,40}")
		_, err := os.Stat(filepath.Join(home, ".config", "foundry", "cli.json"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}

// TestDistributionPayouts: a distribution's payouts are a table of their
// own, a page at a time, with a hint to the next page.
func TestDistributionPayouts(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	for _, tr := range transports(sys) {
		t.Run(tr.name, func(t *testing.T) {
			admin := with(tr.env, "FOUNDRY_API_KEY", allinonetest.AdminKey)
			asset := okID(t, admin, "assets", "create", "shared-"+tr.name, "--type", "DATA")
			for _, who := range []string{"ann", "ben"} {
				okID(t, admin, "contributions", "create", "--asset", asset, "--cost", "5", "--contributor", who+"-"+tr.name)
			}
			d := okID(t, admin, "distributions", "create", "--asset", asset, "--value", "10")
			full := okJSON(t, tr.env, "distributions", "show", d)
			require.Equal(t, 2.0, full["payout_count"])
			require.Equal(t, map[string]any{"limit": 100.0, "offset": 0.0, "total": 2.0, "has_more": false, "next_cursor": ""},
				full["pagination"])
			payouts := full["payouts"].([]any)
			require.Len(t, payouts, 2)
			var sum float64
			for _, p := range payouts {
				sum += p.(map[string]any)["amount"].(float64)
			}
			require.Equal(t, 10.0, sum, "the payouts sum to the value")

			first, second := payouts[0].(map[string]any), payouts[1].(map[string]any)
			r := run(t, tr.env, "distributions", "show", d, "--limit", "1")
			require.Equal(t, cli.ExitOK, r.code, r.stderr)
			require.Regexp(t, regexp.MustCompile(`(?m)^CONTRIBUTOR +AMOUNT\n`+regexp.QuoteMeta(first["contributor_id"].(string))+` +`+
				formatAmount(first["amount"].(float64))+`\n$`), r.stdout)
			require.Equal(t, "1 of 2 payouts shown: foundry distributions show "+d+" --offset 1 for more\n", r.stderr)
			require.NotContains(t, r.stdout, "pagination", "the note says where the page sits")
			r = run(t, tr.env, "distributions", "show", d, "--limit", "1", "--offset", "1")
			require.Equal(t, cli.ExitOK, r.code, r.stderr)
			require.Regexp(t, regexp.MustCompile(`(?m)^CONTRIBUTOR +AMOUNT\n`+regexp.QuoteMeta(second["contributor_id"].(string))+` +`), r.stdout)
			require.Empty(t, r.stderr, "the last page")
		})
	}
}

// formatAmount writes an amount as the tables do: as short as it is exact.
func formatAmount(f float64) string { return regexp.QuoteMeta(strconv.FormatFloat(f, 'f', -1, 64)) }

// TestJQ: --jq filters the JSON answer (strings bare, anything else as
// compact JSON, a value a line), over both transports; a filter that does
// not parse, or one beside -o table or -o id, is a usage error before
// any request.
func TestJQ(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	for _, tr := range transports(sys) {
		t.Run(tr.name, func(t *testing.T) {
			admin := with(tr.env, "FOUNDRY_API_KEY", allinonetest.AdminKey)
			mine := "jq-" + tr.name
			first := okID(t, admin, "tasks", "create", "jq one "+tr.name, "--type", "review", "--idea", mine)
			second := okID(t, admin, "tasks", "create", "jq two "+tr.name, "--type", "review", "--idea", mine)
			require.Equal(t, second+"\n"+first+"\n", ok(t, tr.env, "tasks", "list", "--idea", mine, "--jq", ".tasks[].id"),
				"strings bare, one a line, in the list's order")
			require.Equal(t, "2\n", ok(t, tr.env, "tasks", "list", "--idea", mine, "--jq", ".pagination.total"))
			require.Equal(t, `{"n":2,"status":"pending"}`+"\n",
				ok(t, tr.env, "tasks", "list", "--idea", mine, "--jq", `{n: (.tasks | length), status: .tasks[0].status}`),
				"anything else as compact JSON")
		})
	}
	for _, args := range [][]string{
		{"tasks", "list", "--jq", ".tasks["},
		{"tasks", "list", "--jq", ".tasks", "-o", "id"},
		{"tasks", "list", "--jq", ".tasks", "-o", "table"},
	} {
		r := run(t, map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}, args...)
		require.Equal(t, cli.ExitUsage, r.code, "%v: refused before any request (no Foundry listens there)\n%s", args, r.stderr)
		require.Contains(t, r.stderr, "--jq", "%v", args)
	}
}
