// Package cli_test runs the foundry client in-process against a whole
// Foundry (allinonetest), over REST and over gRPC, on every storage engine
// available, and checks what it prints and how it exits.
package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// result is one run of the client.
type result struct {
	code           int
	stdout, stderr string
}

// run executes the client with env as its whole environment (so no real
// config file or variable of the machine running the test leaks in).
func run(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return runOn(t, &bytes.Buffer{}, env, args...)
}

// runOn is run with stderr written to errOut.
func runOn(t *testing.T, errOut interface {
	io.Writer
	fmt.Stringer
}, env map[string]string, args ...string,
) result {
	t.Helper()
	return runWith(t, nil, errOut, env, args...)
}

// runIn is run with stdin as the standard input.
func runIn(t *testing.T, stdin io.Reader, env map[string]string, args ...string) result {
	t.Helper()
	return runWith(t, stdin, &bytes.Buffer{}, env, args...)
}

func runWith(t *testing.T, stdin io.Reader, errOut interface {
	io.Writer
	fmt.Stringer
}, env map[string]string, args ...string,
) result {
	t.Helper()
	var out bytes.Buffer
	code := cli.Execute(context.Background(), args, stdin, &out, errOut, func(k string) string { return env[k] })
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// terminal is a stderr that says it is a terminal, as the client asks
// before it shows progress.
type terminal struct{ bytes.Buffer }

func (*terminal) IsTerminal() bool { return true }

// ok runs the client and requires success and a quiet stderr.
func ok(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	r := run(t, env, args...)
	require.Equal(t, cli.ExitOK, r.code, "foundry %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.stdout, r.stderr)
	require.Empty(t, r.stderr, "foundry %s", strings.Join(args, " "))
	return r.stdout
}

// okJSON runs the client with --json and decodes the single JSON object
// it prints.
func okJSON(t *testing.T, env map[string]string, args ...string) map[string]any {
	t.Helper()
	out := ok(t, env, append(args, "--json")...)
	require.True(t, strings.HasSuffix(out, "}\n"), "one JSON object and a newline: %q", out)
	require.Equal(t, 1, strings.Count(out, "\n"), "one line: %q", out)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	return doc
}

// with returns env plus the given name=value pairs.
func with(env map[string]string, pairs ...string) map[string]string {
	out := make(map[string]string, len(env)+len(pairs)/2)
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = pairs[i+1]
	}
	return out
}

// transports are the two ways of reaching a system, as environments.
func transports(sys *allinonetest.System) []struct {
	name string
	env  map[string]string
} {
	return []struct {
		name string
		env  map[string]string
	}{
		{"rest", map[string]string{"FOUNDRY_URL": sys.BaseURL}},
		{"grpc", map[string]string{"FOUNDRY_CLI_GRPC_ADDR": sys.GRPCAddr, "FOUNDRY_CLI_SERVICE_KEY": allinonetest.ServiceKey}},
	}
}

// api calls the REST API directly (what the client does not do: register,
// deposit, create assets and tasks) and requires want. A write goes as the
// administrator unless headers name a credential.
func api(t *testing.T, sys *allinonetest.System, method, path string, body any, want int, headers ...string) map[string]any {
	t.Helper()
	if method != http.MethodGet && !slices.ContainsFunc(headers, func(h string) bool {
		return strings.HasPrefix(h, "Authorization:") || strings.HasPrefix(h, "X-API-Key:")
	}) {
		headers = append(headers, "X-API-Key: "+allinonetest.AdminKey)
	}
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(method, sys.URL(path), bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, want, resp.StatusCode, "%s %s: %s", method, path, got)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(got, &doc))
	return doc
}

// rawGET returns a REST answer's bytes.
func rawGET(t *testing.T, sys *allinonetest.System, path string) string {
	t.Helper()
	resp, err := http.Get(sys.URL(path))
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", got)
	return string(got)
}

// row matches a "field  value" line of the client's vertical output.
func row(field, value string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(field) + ` +` + regexp.QuoteMeta(value) + `$`)
}

// TestCommands walks every command over both transports: the same steps,
// the same answers.
func TestCommands(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine), "-rate-poll-interval=0")
		ideaIDs := map[string]string{}
		for _, tr := range transports(sys) {
			// Sequential: the task queue is shared, and each transport's
			// claims must find its own tasks.
			t.Run(tr.name, func(t *testing.T) {
				ideaIDs[tr.name] = walkCommands(t, sys, tr.name, tr.env)
			})
		}

		t.Run("both transports print the same JSON", func(t *testing.T) {
			rest, grpc := transports(sys)[0].env, transports(sys)[1].env
			for _, id := range ideaIDs {
				show := ok(t, rest, "ideas", "show", id, "--json")
				require.Equal(t, show, ok(t, grpc, "ideas", "show", id, "--json"))
				require.Equal(t, rawGET(t, sys, "/api/ideas/"+id)+"\n", show, "REST passes the API's bytes through")
			}
			list := ok(t, rest, "ideas", "list", "--json")
			require.Equal(t, rawGET(t, sys, "/api/ideas")+"\n", list)
			require.Equal(t, list, ok(t, grpc, "ideas", "list", "--json"))
			tasks := ok(t, rest, "tasks", "list", "--json")
			require.Equal(t, tasks, ok(t, grpc, "tasks", "list", "--json"))
		})
	})
}

// walkCommands runs every command once over the transport env names and
// returns the id of the idea it created.
func walkCommands(t *testing.T, sys *allinonetest.System, name string, env map[string]string) string {
	t.Helper()
	var ideaID string
	ideaName := "Solar kettle " + name
	admin := with(env, "FOUNDRY_API_KEY", allinonetest.AdminKey)

	t.Run("ideas create", func(t *testing.T) {
		idea := okJSON(t, admin, "ideas", "create", ideaName, "--value", "100", "--cost", "10", "--tag", "energy-"+name)
		ideaID, _ = idea["id"].(string)
		require.Regexp(t, `^[0-9a-f-]{36}$`, ideaID)
		require.Equal(t, ideaName, idea["name"])
		require.Equal(t, "none", idea["stage"])
		require.Equal(t, 4.5455, idea["score"], "100 × 0.5 / (10 + 1), to 4 decimals")
		require.Equal(t, []any{"energy-" + name}, idea["tags"])
	})

	t.Run("ideas list: a table and JSON", func(t *testing.T) {
		out := ok(t, env, "ideas", "list")
		require.Regexp(t, `^ID +STAGE +SCORE +VALUE +COST +NAME\n`, out)
		require.Regexp(t, regexp.MustCompile(`(?m)^`+ideaID+` +none +4\.5455 +100 +10 +`+ideaName+`$`), out)

		doc := okJSON(t, env, "ideas", "list", "--tag", "energy-"+name)
		ideas, _ := doc["ideas"].([]any)
		require.Len(t, ideas, 1, "only the idea with the tag")
		require.Equal(t, ideaID, ideas[0].(map[string]any)["id"])
		require.Equal(t, map[string]any{"limit": 50.0, "offset": 0.0, "total": 1.0, "has_more": false, "next_cursor": ""}, doc["pagination"])
	})

	t.Run("ideas show", func(t *testing.T) {
		out := ok(t, env, "ideas", "show", ideaID)
		require.Regexp(t, row("id", ideaID), out)
		require.Regexp(t, row("name", ideaName), out)
		require.Regexp(t, row("stage", "none"), out)
		require.Regexp(t, row("parent_idea_id", "-"), out, "null is a dash")
		require.Regexp(t, row("tags", `["energy-`+name+`"]`), out, "a list is compact JSON")
	})

	t.Run("ideas impact: record usage, refuse half a record, list", func(t *testing.T) {
		rec := okJSON(t, admin, "ideas", "impact", ideaID, "--usage", "12", "--unit", "requests", "--evidence",
			"https://metrics.example/"+name, "--reference", "w48")
		record, _ := rec["record"].(map[string]any)
		require.Equal(t, "usage", record["kind"])
		require.Equal(t, 12.0, record["quantity"])
		again := okJSON(t, admin, "ideas", "impact", ideaID, "--usage", "12", "--unit", "requests", "--evidence",
			"https://metrics.example/"+name, "--reference", "w48")
		require.Equal(t, true, again["duplicate"], "the same reference records nothing again")
		r := run(t, admin, "ideas", "impact", ideaID, "--usage", "1", "--evidence", "e", "--reference", "r")
		require.Equal(t, cli.ExitUsage, r.code)
		require.Contains(t, r.stderr, "--unit is required with --usage")
		list := okJSON(t, env, "ideas", "impact", ideaID)
		require.Equal(t, 1.0, list["totals"].(map[string]any)["usage_records"])
		require.Len(t, list["records"], 1)
	})

	t.Run("ideas advance: the next stage, or any; an operator's", func(t *testing.T) {
		for _, args := range [][]string{{"ideas", "advance", ideaID}, {"ideas", "advance", ideaID, "--to", "testing"}} {
			r := run(t, env, args...)
			require.Equal(t, cli.ExitFailed, r.code)
			require.Empty(t, r.stdout)
			require.Equal(t, "foundry: this request needs a credential (operator): send Authorization: Bearer <token>, "+
				"or the administrator key in X-API-Key\n"+
				"  (no credential is set: --token (a session or API token) or --api-key, FOUNDRY_TOKEN or FOUNDRY_API_KEY, or the config file)\n",
				r.stderr)
		}

		require.Regexp(t, row("stage", "specced"), ok(t, admin, "ideas", "advance", ideaID))
		require.Equal(t, "specced", okJSON(t, env, "ideas", "show", ideaID)["stage"])
		idea := okJSON(t, admin, "ideas", "advance", ideaID, "--to", "testing")
		require.Equal(t, "testing", idea["stage"])
	})

	t.Run("unknown idea: the detail, exit 1", func(t *testing.T) {
		for _, args := range [][]string{{"ideas", "show", "no-such-idea"}, {"ideas", "advance", "no-such-idea"}} {
			r := run(t, admin, args...)
			require.Equal(t, cli.ExitFailed, r.code, args)
			require.Empty(t, r.stdout, args)
			require.Equal(t, "foundry: idea no-such-idea not found\n", r.stderr, args)
		}
	})

	t.Run("validation: the detail, exit 1", func(t *testing.T) {
		r := run(t, admin, "ideas", "create", "x", "--confidence", "3")
		require.Equal(t, cli.ExitFailed, r.code)
		require.Equal(t, "foundry: confidence: must be between 0 and 1\n", r.stderr)
	})

	// A contributor with 995 CC: 10 USD at the buy rate of 99.5.
	reg := api(t, sys, http.MethodPost, "/api/onboarding/register", map[string]any{"handle": "ada-" + name}, http.StatusCreated)
	contributor, _ := reg["contributor_id"].(string)
	api(t, sys, http.MethodPost, "/api/cc/deposit", map[string]any{"contributor_id": contributor, "amount_usd": 10, "reference": "wire-" + name},
		http.StatusCreated, "X-API-Key: "+allinonetest.AdminKey)
	token := with(env, "FOUNDRY_TOKEN", reg["session_token"].(string))
	stakeIdea := okJSON(t, admin, "ideas", "create", "Wind sock "+name, "--value", "50", "--cost", "10")["id"].(string)

	t.Run("cc balance: the token's contributor, or one named", func(t *testing.T) {
		out := ok(t, token, "cc", "balance")
		require.Regexp(t, row("contributor_id", contributor), out)
		require.Regexp(t, row("available_cc", "995"), out)
		require.Regexp(t, row("staked_cc", "0"), out)
		require.Equal(t, map[string]any{"contributor_id": contributor, "contributor_handle": "ada-" + name, "available_cc": 995.0,
			"staked_cc": 0.0, "cooling_cc": 0.0}, okJSON(t, env, "cc", "balance", contributor))

		r := run(t, env, "cc", "balance")
		require.Equal(t, cli.ExitUsage, r.code, "neither a contributor nor a token")
		require.Contains(t, r.stderr, "foundry: name the contributor (--contributor) or set a session token")
	})

	t.Run("cc stake and unstake", func(t *testing.T) {
		dry := okJSON(t, env, "cc", "stake", stakeIdea, "500", "--dry-run", "--contributor", contributor)
		require.Equal(t, true, dry["dry_run"])
		require.Equal(t, 495.0, dry["available_cc_after"], "a projection needs no token")

		r := run(t, env, "cc", "stake", stakeIdea, "100", "--contributor", contributor)
		require.Equal(t, cli.ExitFailed, r.code, "a real stake needs the token")
		require.Contains(t, r.stderr, "(no session token is set: --token, FOUNDRY_TOKEN")

		stake := okJSON(t, token, "cc", "stake", stakeIdea, "100")
		require.Equal(t, false, stake["dry_run"])
		require.Equal(t, contributor, stake["contributor_id"])
		require.Equal(t, stakeIdea, stake["idea_id"])
		require.Equal(t, 100.0, stake["position_cc"])
		require.Equal(t, 895.0, stake["available_cc_after"])

		out := ok(t, token, "cc", "unstake", stakeIdea, "40")
		require.Regexp(t, row("amount_cc", "40"), out)
		require.Regexp(t, row("status", "released"), out, "an idea at stage none has no cooldown")
		require.Equal(t, map[string]any{"contributor_id": contributor, "contributor_handle": "ada-" + name, "available_cc": 935.0,
			"staked_cc": 60.0, "cooling_cc": 0.0}, okJSON(t, token, "cc", "balance"))

		r = run(t, token, "cc", "stake", stakeIdea, "1000000")
		require.Equal(t, cli.ExitFailed, r.code)
		require.Contains(t, r.stderr, "insufficient")
	})

	t.Run("contributions add", func(t *testing.T) {
		asset := api(t, sys, http.MethodPost, "/api/assets", map[string]any{"type": "CODE", "name": "repo-" + name}, http.StatusCreated)["id"].(string)
		c := okJSON(t, token, "contributions", "add", "--asset", asset, "--cost", "12.5", "--metadata", `{"has_tests": true}`,
			"--idempotency-key", "contribution-1")
		require.Equal(t, contributor, c["contributor_id"], "the token's contributor")
		require.Equal(t, asset, c["asset_id"])
		require.Equal(t, 12.5, c["cost_amount"])
		require.Equal(t, map[string]any{"has_tests": true}, c["metadata"])
		require.Equal(t, "api", c["source"])
		again := okJSON(t, token, "contributions", "add", "--asset", asset, "--cost", "12.5", "--metadata", `{"has_tests": true}`,
			"--idempotency-key", "contribution-1")
		require.Equal(t, c["id"], again["id"], "the same key records it once")

		r := run(t, token, "contributions", "add", "--asset", asset, "--cost", "1", "--contributor", "bob-"+name)
		require.Equal(t, cli.ExitFailed, r.code, "a contributor records only its own contributions")
		require.Contains(t, r.stderr, "a contributor acts only for itself")
		other := okJSON(t, admin, "contributions", "add", "--asset", asset, "--cost", "0", "--contributor", "bob-"+name)
		require.Equal(t, "bob-"+name, other["contributor_id"])
		require.Equal(t, 0.0, other["cost_amount"])
		require.Equal(t, "accepted", other["status"], "an operator's needs no review")

		require.Equal(t, "claimed", c["status"], "the contributor's own is a claim")
		r = run(t, admin, "contributions", "review", c["id"].(string), "--accept")
		require.Equal(t, cli.ExitUsage, r.code)
		require.Contains(t, r.stderr, "--reason is required")
		r = run(t, admin, "contributions", "review", c["id"].(string), "--reject", "--cost", "1", "--reason", "r")
		require.Equal(t, cli.ExitUsage, r.code)
		reviewed := okJSON(t, admin, "contributions", "review", c["id"].(string), "--accept", "--cost", "10", "--coherence", "0.7",
			"--reason", "checked "+name)
		require.Equal(t, "accepted", reviewed["status"])
		require.Equal(t, 10.0, reviewed["cost_amount"])
		require.Equal(t, 12.5, reviewed["claimed_cost_amount"])
		require.Equal(t, 0.7, reviewed["coherence_score"])
		r = run(t, admin, "contributions", "review", c["id"].(string), "--reject", "--reason", "again")
		require.Equal(t, cli.ExitFailed, r.code, "reviewed once")
		require.Contains(t, r.stderr, "only a claim is reviewed")
	})

	t.Run("tasks claim, complete, fail", func(t *testing.T) {
		first := api(t, sys, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "build it " + name, "task_type": "impl"}, http.StatusCreated)["id"].(string)
		second := api(t, sys, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "test it " + name, "task_type": "impl",
			"context": map[string]any{"idea_id": "idea-" + name}}, http.StatusCreated)["id"].(string)
		byIdea := okJSON(t, env, "tasks", "list", "--idea", "idea-"+name)
		// A worker's API token, created the way an operator would.
		secret := api(t, sys, http.MethodPost, "/api/tokens", map[string]any{"name": "worker-" + name, "role": "worker"},
			http.StatusCreated)["token"].(string)
		worker := with(env, "FOUNDRY_TOKEN", secret)
		r := run(t, env, "tasks", "claim", "--worker", "worker-a")
		require.Equal(t, cli.ExitFailed, r.code, "claiming needs a worker's token")
		require.Equal(t, map[string]any{"limit": 50.0, "offset": 0.0, "total": 1.0, "has_more": false, "next_cursor": ""}, byIdea["pagination"],
			"only the task whose context names the idea")
		require.NotContains(t, byIdea, "total", "the total is the pagination's")
		require.Equal(t, second, byIdea["tasks"].([]any)[0].(map[string]any)["id"])

		claimed := okJSON(t, worker, "tasks", "claim", "--worker", "worker-a", "--type", "impl", "--lease", "2m")
		task, _ := claimed["task"].(map[string]any)
		require.Equal(t, first, task["id"], "the oldest pending task")
		require.Equal(t, "running", task["status"])
		require.Equal(t, "worker-a", task["worker_id"])

		r = run(t, token, "tasks", "complete", first, "--worker", "worker-a")
		require.Equal(t, cli.ExitFailed, r.code, "only the claimer reports: %s", r.stderr)
		done := okJSON(t, worker, "tasks", "complete", first, "--worker", "worker-a", "--output", "built")
		require.Equal(t, "completed", done["status"])
		require.Equal(t, 100.0, done["progress_pct"])
		require.Equal(t, "built", done["output"])

		out := ok(t, worker, "tasks", "claim", "--worker", "worker-b")
		require.Regexp(t, row("id", second), out)
		require.Regexp(t, row("worker_id", "worker-b"), out)
		out = ok(t, worker, "tasks", "fail", second, "--worker", "worker-b", "--error", "quota exhausted")
		require.Regexp(t, row("status", "failed"), out)
		require.Regexp(t, row("error_summary", "quota exhausted"), out)
		require.Regexp(t, row("error_category", "provider_error"), out, "classified from the summary")

		require.Equal(t, "no pending task\n", ok(t, worker, "tasks", "claim", "--worker", "worker-c"))
		require.Equal(t, map[string]any{"task": nil}, okJSON(t, worker, "tasks", "claim", "--worker", "worker-c"))

		list := ok(t, env, "tasks", "list", "--status", "failed")
		require.Regexp(t, `^ID +TYPE +STATUS +PROGRESS +DIRECTION\n`, list)
		require.Regexp(t, regexp.MustCompile(`(?m)^`+second+` +impl +failed +0% +test it `+name+`$`), list)
		require.NotContains(t, list, first)

		r = run(t, worker, "tasks", "complete", second)
		require.Equal(t, cli.ExitFailed, r.code, "a failed task does not complete")
		require.NotEmpty(t, strings.TrimPrefix(r.stderr, "foundry: "))
	})

	t.Run("status", func(t *testing.T) {
		out := ok(t, env, "status")
		target := env["FOUNDRY_URL"] + env["FOUNDRY_CLI_GRPC_ADDR"]
		require.True(t, strings.HasPrefix(out, "Foundry at "+target+": ready\nCHECK"), out)
		for _, check := range allinonetest.ReadinessChecks() {
			require.Regexp(t, row(check, "ok"), out)
		}
		doc := okJSON(t, env, "status", "--wait")
		require.Equal(t, "ready", doc["status"])
		require.Len(t, doc["checks"], 4)
	})
	return ideaID
}

// TestListAll pages through every task, merging the pages, and shows no
// progress when stderr is not a terminal.
func TestListAll(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine))
		var ids []string
		for i := range 5 {
			ids = append(ids, api(t, sys, http.MethodPost, "/api/agent/tasks",
				map[string]any{"direction": fmt.Sprintf("verify %d", i), "task_type": "verify"}, http.StatusCreated)["id"].(string))
		}
		api(t, sys, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "other", "task_type": "spec"}, http.StatusCreated)
		for i := range 3 {
			api(t, sys, http.MethodPost, "/api/ideas", map[string]any{"name": fmt.Sprintf("idea %d", i), "potential_value": 10 * (i + 1)}, http.StatusCreated)
		}
		for _, tr := range transports(sys) {
			t.Run(tr.name, func(t *testing.T) {
				doc := okJSON(t, tr.env, "tasks", "list", "--type", "verify", "--limit", "2", "--all")
				var got []string
				for _, it := range doc["tasks"].([]any) {
					got = append(got, it.(map[string]any)["id"].(string))
				}
				require.Equal(t, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}, got, "every page, newest first")
				require.Equal(t, map[string]any{"limit": 5.0, "offset": 0.0, "total": 5.0, "has_more": false, "next_cursor": ""}, doc["pagination"],
					"one merged page")

				table := ok(t, tr.env, "tasks", "list", "--type", "verify", "--limit", "2", "--all")
				require.Equal(t, 6, strings.Count(table, "\n"), "a header and five rows: %s", table)

				r := run(t, tr.env, "tasks", "list", "--type", "verify", "--limit", "2")
				require.Equal(t, cli.ExitOK, r.code)
				require.Equal(t, 3, strings.Count(r.stdout, "\n"), "one page of two: %s", r.stdout)
				require.Equal(t, "2 of 5 tasks shown: --offset 2 or --all for more\n", r.stderr)

				ideas := okJSON(t, tr.env, "ideas", "list", "--limit", "1", "--all")
				var names []string
				for _, it := range ideas["ideas"].([]any) {
					names = append(names, it.(map[string]any)["name"].(string))
				}
				require.Equal(t, []string{"idea 2", "idea 1", "idea 0"}, names, "by score, highest first")
				require.Equal(t, map[string]any{"limit": 3.0, "offset": 0.0, "total": 3.0, "has_more": false, "next_cursor": ""}, ideas["pagination"])
				require.Equal(t, 3.0, ideas["summary"].(map[string]any)["total_ideas"])
			})
		}
	})
}

// TestProgressOnATerminal: the same paging shows its progress on a
// terminal's stderr, and the table still goes to stdout alone.
func TestProgressOnATerminal(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	for i := range 3 {
		api(t, sys, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": fmt.Sprintf("t%d", i), "task_type": "test"}, http.StatusCreated)
	}
	for _, tr := range transports(sys) {
		r := runOn(t, &terminal{}, tr.env, "tasks", "list", "--limit", "2", "--all")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Equal(t, "\r\x1b[Ktasks: 2 of 3\r\x1b[Ktasks: 3 of 3\r\x1b[K", r.stderr, tr.name)
		require.Equal(t, 4, strings.Count(r.stdout, "\n"), "a header and three rows: %s", r.stdout)
		require.NotContains(t, r.stdout, "\x1b", tr.name)
	}
	// Waiting for a Foundry that is not there: progress, then the verdict.
	r := runOn(t, &terminal{}, map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}, "status", "--wait", "--timeout", "1500ms")
	require.Equal(t, cli.ExitUnavailable, r.code)
	require.Contains(t, r.stderr, "\r\x1b[Kwaiting for Foundry (")
	require.Regexp(t, `\r\x1b\[Kfoundry: not ready after 1\.5s: cannot reach Foundry at [^\r]*connection refused\n$`, r.stderr,
		"the status line is cleared before the verdict")
}

// TestStatusWait: status --wait returns once a Foundry starting late is
// ready, over both transports; without one it gives up at the timeout.
func TestStatusWait(t *testing.T) {
	t.Parallel()
	httpAddr, grpcAddr := allinonetest.FreeAddr(t), allinonetest.FreeAddr(t)
	envs := map[string]map[string]string{
		"rest": {"FOUNDRY_URL": "http://" + httpAddr},
		"grpc": {"FOUNDRY_CLI_GRPC_ADDR": grpcAddr, "FOUNDRY_CLI_SERVICE_KEY": allinonetest.ServiceKey},
	}
	for name, env := range envs {
		r := run(t, env, "status")
		require.Equal(t, cli.ExitUnavailable, r.code, "%s: nothing listens yet", name)
		require.Contains(t, r.stderr, "foundry: cannot reach Foundry at ", name)
	}

	var wg sync.WaitGroup
	results := map[string]result{}
	var mu sync.Mutex
	for name, env := range envs {
		wg.Go(func() {
			r := run(t, env, "status", "--wait", "--timeout", "2m")
			mu.Lock()
			results[name] = r
			mu.Unlock()
		})
	}
	time.Sleep(500 * time.Millisecond) // both are waiting now
	allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite), "-http-addr="+httpAddr, "-grpc-addr="+grpcAddr)
	wg.Wait()
	for name, r := range results {
		require.Equal(t, cli.ExitOK, r.code, "%s: %s", name, r.stderr)
		require.Empty(t, r.stderr, "%s: no progress off a terminal", name)
		require.Regexp(t, `^Foundry at \S+: ready\n`, r.stdout, name)
	}
	require.Len(t, results, 2)

	r := run(t, map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}, "status", "--wait", "--timeout", "1s")
	require.Equal(t, cli.ExitUnavailable, r.code)
	require.Regexp(t, `^foundry: not ready after 1s: cannot reach Foundry at http://127\.0\.0\.1:\d+: .*connection refused\n$`, r.stderr)
}

// TestSettings: which settings win, black-box: only the winning address
// answers.
func TestSettings(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	dead := "http://" + allinonetest.FreeAddr(t)
	dir := t.TempDir()
	writeConfig := func(path string, settings map[string]string) {
		raw, err := json.Marshal(settings)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, raw, 0o600))
	}
	home := filepath.Join(dir, "home")
	writeConfig(filepath.Join(home, ".config", "foundry", "cli.json"), map[string]string{"url": sys.BaseURL})
	named := filepath.Join(dir, "named.json")
	writeConfig(named, map[string]string{"url": dead})

	// status names the address it used.
	status := func(env map[string]string, args ...string) result {
		return run(t, env, append([]string{"status"}, args...)...)
	}
	t.Run("the default file under HOME", func(t *testing.T) {
		r := status(map[string]string{"HOME": home})
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.True(t, strings.HasPrefix(r.stdout, "Foundry at "+sys.BaseURL+": ready"), r.stdout)
	})
	t.Run("the environment over the file", func(t *testing.T) {
		r := status(map[string]string{"HOME": home, "FOUNDRY_URL": dead})
		require.Equal(t, cli.ExitUnavailable, r.code)
		require.Contains(t, r.stderr, "cannot reach Foundry at "+dead)
	})
	t.Run("an empty variable is unset", func(t *testing.T) {
		r := status(map[string]string{"HOME": home, "FOUNDRY_URL": ""})
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
	})
	t.Run("the flag over the environment", func(t *testing.T) {
		r := status(map[string]string{"HOME": home, "FOUNDRY_URL": dead}, "--url", sys.BaseURL)
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.True(t, strings.HasPrefix(r.stdout, "Foundry at "+sys.BaseURL+": ready"), r.stdout)
	})
	t.Run("--config replaces the default file", func(t *testing.T) {
		r := status(map[string]string{"HOME": home}, "--config", named)
		require.Equal(t, cli.ExitUnavailable, r.code)
		require.Contains(t, r.stderr, "cannot reach Foundry at "+dead)
		r = status(map[string]string{"HOME": home, "FOUNDRY_CLI_CONFIG": named})
		require.Equal(t, cli.ExitUnavailable, r.code, "FOUNDRY_CLI_CONFIG names it too")
		require.Contains(t, r.stderr, "cannot reach Foundry at "+dead)
	})
	t.Run("a missing named file is an error; a missing default one is not", func(t *testing.T) {
		missing := filepath.Join(dir, "missing.json")
		for _, r := range []result{
			status(map[string]string{"HOME": home}, "--config", missing),
			status(map[string]string{"HOME": home, "FOUNDRY_CLI_CONFIG": missing}),
		} {
			require.Equal(t, cli.ExitUsage, r.code)
			require.Contains(t, r.stderr, "foundry: config file: open "+missing+": no such file or directory")
		}
		r := status(map[string]string{"HOME": filepath.Join(dir, "nobody"), "FOUNDRY_URL": sys.BaseURL})
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
	})
	t.Run("gRPC from the config file, its key from the environment", func(t *testing.T) {
		cfg := filepath.Join(dir, "grpc.json")
		writeConfig(cfg, map[string]string{"grpc_addr": sys.GRPCAddr})
		r := status(map[string]string{"FOUNDRY_CLI_CONFIG": cfg})
		require.Equal(t, cli.ExitFailed, r.code, "a person without a credential or the service key: %s", r.stderr)
		require.Contains(t, r.stderr, "a Foundry service takes a caller's own credential")
		r = status(map[string]string{"FOUNDRY_CLI_CONFIG": cfg, "FOUNDRY_CLI_SERVICE_KEY": allinonetest.ServiceKey})
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.True(t, strings.HasPrefix(r.stdout, "Foundry at "+sys.GRPCAddr+": ready"), r.stdout)
		r = status(map[string]string{"FOUNDRY_CLI_CONFIG": cfg, "FOUNDRY_CLI_SERVICE_KEY": "wrong"})
		require.Equal(t, cli.ExitFailed, r.code)
		require.Contains(t, r.stderr, "foundry: wrong service key")
	})
}

// TestUsageErrors: mistakes on the command line exit 2 and send nothing.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	// Nothing listens here: a usage error must be found before any call.
	env := map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ideas", "show"}, "foundry: foundry ideas show expects IDEA_ID (got 0 arguments)\nRun 'foundry ideas show --help' for usage.\n"},
		{[]string{"ideas", "show", " "}, "foundry: IDEA_ID must not be empty\nRun 'foundry ideas show --help' for usage.\n"},
		{[]string{"ideas", "lst"}, "foundry: unknown command \"lst\" for \"foundry ideas\"; did you mean list?\nRun 'foundry ideas --help' for usage.\n"},
		{[]string{"ideas", "list", "--bogus"}, "foundry: unknown flag: --bogus\nRun 'foundry ideas list --help' for usage.\n"},
		{[]string{"cc", "stake", "idea", "lots", "--token", "t"}, "foundry: AMOUNT_CC \"lots\" is not a number\nRun 'foundry cc stake --help' for usage.\n"},
		{[]string{"tasks", "claim"}, "foundry: --worker is required\nRun 'foundry tasks claim --help' for usage.\n"},
		{[]string{"contributions", "add", "--asset", "a"}, "foundry: --cost is required\nRun 'foundry contributions create --help' for usage.\n"},
		{[]string{"contributions", "add", "--asset", "a", "--cost", "1", "--contributor", "c", "--metadata", "[1]"},
			"foundry: --metadata must be a JSON object: "},
		{[]string{"status", "--url", "ftp://example.com"}, "foundry: --url \"ftp://example.com\" is not an http:// or https:// address\n"},
		{[]string{"contributions", "list"}, "foundry: name the asset (--asset) or the contributor (--contributor), or set a session token "},
		{[]string{"contributions", "list", "--asset", "a", "--contributor", "c"}, "foundry: --asset and --contributor name two lists: give one\n"},
		{[]string{"cc", "deposit", "c", "--usd", "1"}, "foundry: --reference is required: the payment's reference, which records the deposit once\n"},
		{[]string{"cc", "deposit", "c", "--reference", "r"}, "foundry: --usd is required\n"},
		{[]string{"cc", "withdraw", "lots", "--token", "t"}, "foundry: AMOUNT_CC \"lots\" is not a number\n"},
		{[]string{"tasks", "create", "x"}, "foundry: --type is required (one of spec, impl, test, review, heal, code-review, merge, deploy, verify, reflect)\n"},
		{[]string{"tasks", "create", "x", "--type", "impl", "--idea", "a", "--context", `{"idea_id": "b"}`},
			"foundry: --idea \"a\" and the idea_id of --context differ: give one\n"},
		{[]string{"tasks", "create", "x", "--type", "impl", "--context", "[]"}, "foundry: --context must be a JSON object: "},
		{[]string{"assets", "create", "x"}, "foundry: --type is required (one of CODE, MODEL, CONTENT, DATA)\n"},
		{[]string{"distributions", "create", "--asset", "a"}, "foundry: --value is required\n"},
		{[]string{"distributions", "list"}, "foundry: --asset is required\n"},
		{[]string{"register"}, "foundry: foundry register expects HANDLE (got 0 arguments)\n"},
	} {
		r := run(t, env, tc.args...)
		require.Equal(t, cli.ExitUsage, r.code, "%v: %s", tc.args, r.stderr)
		require.Empty(t, r.stdout, tc.args)
		require.True(t, strings.HasPrefix(r.stderr, tc.want), "%v: %q", tc.args, r.stderr)
	}

	// Stopped (Ctrl-C) while waiting: its own exit code, whatever the wait
	// would have said.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	var stdout, stderr bytes.Buffer
	code := cli.Execute(ctx, []string{"status", "--wait"}, nil, &stdout, &stderr, func(k string) string { return env[k] })
	require.Equal(t, cli.ExitInterrupted, code)
	require.Empty(t, stdout.String())
	require.Equal(t, "foundry: interrupted\n", stderr.String())

	// A group without a subcommand shows its help.
	out := ok(t, env, "cc")
	require.Contains(t, out, "Credits: balances, deposits, withdrawals, stakes, unstakes, the supply and the rate")
	require.Regexp(t, `(?m)^  stake +Stake CC on an idea`, out)
}

// TestCompletion: every shell gets a script that completes foundry, and
// the completion the scripts ask for names the commands and flag values.
func TestCompletion(t *testing.T) {
	t.Parallel()
	// No address at all: completion must not need Foundry.
	env := map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}
	for shell, marker := range map[string]string{
		"bash": "__start_foundry", "zsh": "#compdef foundry", "fish": "complete -c foundry", "powershell": "Register-ArgumentCompleter",
	} {
		out := ok(t, env, "completion", shell)
		require.Contains(t, out, marker, shell)
		require.Contains(t, out, "__complete", shell)
	}
	// What the scripts run on <TAB>: candidates on stdout, then the
	// directive (":4", no file names); cobra reports it on stderr too.
	complete := func(args ...string) string {
		r := run(t, env, append([]string{"__complete"}, args...)...)
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Equal(t, "Completion ended with directive: ShellCompDirectiveNoFileComp\n", r.stderr)
		return r.stdout
	}
	out := complete("")
	for _, cmd := range []string{"register", "ideas", "tasks", "assets", "contributions", "distributions", "cc", "status", "incidents", "audit",
		"api", "version"} {
		require.Regexp(t, `(?m)^`+cmd+`\t`, out)
	}
	require.Equal(t, "pending\nrunning\ncompleted\nfailed\ntimed_out\nneeds_decision\ndiscarded\ncancelled\n:4\n", complete("tasks", "list", "--status", ""))
	// Every stage: the shell keeps those that match what was typed.
	require.Equal(t, "none\nspecced\nimplementing\ntesting\nreviewing\ncomplete\n:4\n", complete("ideas", "advance", "x", "--to", "sp"))
	require.Equal(t, "json\ntable\nid\n:4\n", complete("ideas", "list", "-o", ""))
	require.Equal(t, "CODE\nMODEL\nCONTENT\nDATA\n:4\n", complete("assets", "create", "x", "--type", ""))
	require.Equal(t, "viewer\nworker\noperator\nadmin\n:4\n", complete("tokens", "create", "x", "--role", ""))
}

// TestDispatch: one cobra tree, in which serve and migrate hand their
// arguments to the server untouched; and, as before serve existed, no
// arguments or a flag first (not help's) is the server's, as serve —
// unless every flag before the first word is one of the client's global
// flags and the word is a command.
func TestDispatch(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		nil, {}, {"-target=all"}, {"-target", "portfolio,gateway"}, {"--target=all"}, {"-http-addr=127.0.0.1:0", "ideas"},
		{"--json", "-target=all"}, {"-q", "-target=all"}, {"-quiet", "ideas"}, {"-o", "json"}, {"--json"}, {"--json", "--", "ideas"},
		{"--config", "ideas"}, {"--json", "nosuchcommand"},
	} {
		require.True(t, cli.IsServer(args), "%q", args)
		require.Empty(t, cli.Unknown(args), "%q", args)
	}
	for _, args := range [][]string{
		{"-h"}, {"-help"}, {"--help"}, {"serve"}, {"migrate"}, {"migrate", "-target=ledger"}, {"ideas", "list"}, {"tasks"},
		{"contributions", "add"}, {"cc", "balance"}, {"status"}, {"completion", "bash"}, {"help"}, {"__complete", "ide"},
		{"__completeNoDesc", "ide"}, {"incidents", "freeze"}, {"audit", "verify"}, {"contributors", "list"},
		// The client's global flags first.
		{"--json", "ideas"}, {"-q", "ideas", "list"}, {"-o", "json", "tasks", "list"}, {"-ojson", "ideas"}, {"-o=id", "ideas"},
		{"--format=table", "-q", "assets", "list"}, {"--jq", ".ideas", "ideas", "list"}, {"--config", "/tmp/c.json", "whoami"},
		{"--request-timeout=5s", "status"}, {"-q", "serve"},
	} {
		require.False(t, cli.IsServer(args), "%q", args)
		require.Empty(t, cli.Unknown(args), "%q", args)
	}
	for _, args := range [][]string{{"idea"}, {"Status"}, {""}, {"serv"}} {
		require.NotEmpty(t, cli.Unknown(args), "%q", args)
	}
	require.Equal(t, "unknown command \"regster\"\n"+
		"  client commands: api, assets, audit, cc, completion, contributions, contributors, distributions, gateway, help, ideas, incidents, login, logout, "+
		"prompts, register, status, tasks, tokens, version, whoami, worker (foundry help)\n"+
		"  the server: foundry serve [flags] (foundry serve -h), foundry migrate [up|status] [flags]", cli.Unknown([]string{"regster"}))

	// What the server is handed, and its exit code passed on.
	env := map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}
	main := func(args ...string) (served []string, r result) {
		var out, errOut bytes.Buffer
		served = []string{"(not run)"}
		code := cli.Main(args, nil, &out, &errOut, func(k string) string { return env[k] }, func(_ context.Context, args []string) int {
			served = append([]string{}, args...)
			return 7
		})
		return served, result{code: code, stdout: out.String(), stderr: errOut.String()}
	}
	for _, tc := range []struct{ args, served []string }{
		{nil, []string{}},
		{[]string{"-target=ledger", "-grpc-addr=127.0.0.1:9091"}, []string{"-target=ledger", "-grpc-addr=127.0.0.1:9091"}},
		{[]string{"serve", "-target=ledger", "-grpc-addr=127.0.0.1:9091"}, []string{"-target=ledger", "-grpc-addr=127.0.0.1:9091"}},
		{[]string{"serve", "-h"}, []string{"-h"}},
		{[]string{"serve", "--help"}, []string{"--help"}},
		{[]string{"migrate"}, []string{"migrate"}},
		{[]string{"migrate", "status", "-target=ledger"}, []string{"migrate", "status", "-target=ledger"}},
		{[]string{"migrate", "-h"}, []string{"migrate", "-h"}},
	} {
		served, r := main(tc.args...)
		require.Equal(t, tc.served, served, "%q", tc.args)
		require.Equal(t, 7, r.code, "%q: the server's exit code", tc.args)
		require.Empty(t, r.stdout+r.stderr, "%q: the server prints what it prints", tc.args)
	}
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"help"}} {
		served, r := main(args...)
		require.Equal(t, []string{"(not run)"}, served, "%q", args)
		require.Equal(t, cli.ExitOK, r.code, "%q", args)
		require.Contains(t, r.stdout, "Usage:\n  foundry [command]", "%q", args)
		require.Regexp(t, `(?m)^  serve +Run Foundry's server`, r.stdout, "%q", args)
		require.Regexp(t, `(?m)^  migrate +Apply the modules' schema migrations`, r.stdout, "%q", args)
	}
	// Global flags before the command are the client's.
	served, r := main("-q", "-o", "json", "version")
	require.Equal(t, []string{"(not run)"}, served)
	require.Equal(t, cli.ExitOK, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "{"), "the JSON the flag before the command asked for: %q", r.stdout)
	require.Contains(t, r.stdout, `"version"`)

	served, r = main("serve", "migrate")
	require.Equal(t, []string{"(not run)"}, served)
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "to apply migrations, run foundry migrate")
	served, r = main("regster")
	require.Equal(t, []string{"(not run)"}, served)
	require.Equal(t, cli.ExitUsage, r.code)
	require.True(t, strings.HasPrefix(r.stderr, "foundry: unknown command \"regster\"\n"), r.stderr)

	// Without a server (Execute), serve and migrate are in the tree but refuse.
	r = run(t, env, "serve")
	require.Equal(t, cli.ExitUsage, r.code)
	require.Contains(t, r.stderr, "this build of foundry has no server")
}

// TestTokensAndWhoami: an administrator issues an API token (printed alone
// on stdout, for scripts), the token says who it is, and once revoked it
// is refused; a contributor logs out.
func TestTokensAndWhoami(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine))
		for _, tr := range transports(sys) {
			t.Run(tr.name, func(t *testing.T) {
				admin := with(tr.env, "FOUNDRY_API_KEY", allinonetest.AdminKey)
				require.Equal(t, "admin", okJSON(t, admin, "whoami")["kind"])

				r := run(t, admin, "tokens", "create", "ci-"+tr.name, "--role", "operator", "--ttl", "30d")
				require.Equal(t, cli.ExitOK, r.code, r.stderr)
				require.Regexp(t, `^fdt_[0-9a-f]{64}\n$`, r.stdout, "the token alone")
				require.Regexp(t, `^token [0-9a-f-]{36} \(ci-`+tr.name+`, role operator, expires 20\d\d-.*\); it is shown only now\n$`, r.stderr)
				operator := with(tr.env, "FOUNDRY_TOKEN", strings.TrimSpace(r.stdout))

				who := okJSON(t, operator, "whoami")
				require.Equal(t, "token", who["kind"])
				require.Equal(t, "operator", who["role"])
				require.Equal(t, "ci-"+tr.name, who["name"])
				id := who["token_id"].(string)

				list := ok(t, admin, "tokens", "list")
				require.Regexp(t, `^ID +NAME +ROLE +CREATED +EXPIRES +REVOKED\n`, list)
				require.Regexp(t, regexp.MustCompile(`(?m)^`+id+` +ci-`+tr.name+` +operator +\S+ +\S+ +-$`), list)
				require.NotContains(t, list, strings.TrimSpace(r.stdout), "never the secret")

				r = run(t, operator, "tokens", "list")
				require.Equal(t, cli.ExitFailed, r.code, "tokens are the administrator's")
				require.Contains(t, r.stderr, "the operator role may not do this: it needs admin")

				revoked := okJSON(t, admin, "tokens", "revoke", id)
				require.Equal(t, id, revoked["id"])
				require.NotNil(t, revoked["revoked_at"])
				require.Eventually(t, func() bool {
					r := run(t, operator, "whoami")
					return r.code == cli.ExitFailed && strings.Contains(r.stderr, "token revoked")
				}, 5*time.Second, 50*time.Millisecond, "a revoked token is refused within the cache's half second")

				reg := api(t, sys, http.MethodPost, "/api/onboarding/register", map[string]any{"handle": "leaver-" + tr.name}, http.StatusCreated)
				session := with(tr.env, "FOUNDRY_TOKEN", reg["session_token"].(string))
				require.Equal(t, "contributor", okJSON(t, session, "whoami")["role"])
				require.Equal(t, true, okJSON(t, session, "logout")["revoked"])
				require.Eventually(t, func() bool {
					r := run(t, session, "whoami")
					return r.code == cli.ExitFailed && strings.Contains(r.stderr, "invalid token")
				}, 5*time.Second, 50*time.Millisecond, "a logged-out session is refused")
			})
		}
	})
}

// TestLocalAdminKey: against a loopback Foundry with no credential set, the
// client uses the key make run wrote to data/admin.key (or
// $FOUNDRY_DATA_DIR/admin.key); never against another host, and never
// over a credential that is set.
func TestLocalAdminKey(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "admin.key"), []byte(allinonetest.AdminKey+"\n"), 0o600))
	env := map[string]string{"FOUNDRY_URL": sys.BaseURL, "FOUNDRY_DATA_DIR": dir}

	r := run(t, env, "whoami")
	require.Equal(t, cli.ExitOK, r.code, r.stderr)
	require.Regexp(t, row("kind", "admin"), r.stdout)
	require.Equal(t, "(the administrator key of the local Foundry, from "+filepath.Join(dir, "admin.key")+")\n", r.stderr)

	reg := api(t, sys, http.MethodPost, "/api/onboarding/register", map[string]any{"handle": "local-ada"}, http.StatusCreated)
	require.Equal(t, "session", okJSON(t, with(env, "FOUNDRY_TOKEN", reg["session_token"].(string)), "whoami")["kind"],
		"a token that is set wins")
	require.Equal(t, "anonymous", okJSON(t, with(env, "FOUNDRY_DATA_DIR", t.TempDir()), "whoami")["kind"], "no key file: nobody")

	// Another host (here an unreachable one) never gets the local key.
	_, port, _ := strings.Cut(strings.TrimPrefix(sys.BaseURL, "http://"), ":")
	r = run(t, with(env, "FOUNDRY_URL", "http://192.0.2.1:"+port, "FOUNDRY_DATA_DIR", dir), "whoami", "--request-timeout", "200ms")
	require.NotEqual(t, cli.ExitOK, r.code)
	require.NotContains(t, r.stderr, "administrator key of the local Foundry")
}
