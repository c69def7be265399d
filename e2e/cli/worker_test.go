package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// lockedBuffer is a stderr two goroutines may use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAWorkerDrivesAnIdeaToComplete: the loop on, waiting for workers
// (its default executor), and foundry worker --demo beside it: an idea
// created through the API reaches complete through a task per stage,
// each claimed, run and reported by the worker, each carrying the idea
// and every earlier stage's output and artifact in its context (and its
// prompt). A signal stops the worker with exit 0.
func TestAWorkerDrivesAnIdeaToComplete(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine), "-rate-poll-interval=0", "-agent-loop",
			"-agent-loop-interval=100ms")
		token := api(t, sys, http.MethodPost, "/api/tokens", map[string]any{"name": "demo worker", "role": "worker"}, http.StatusCreated)["token"].(string)
		api(t, sys, http.MethodPost, "/api/ideas", map[string]any{"id": "kettle", "name": "Solar kettle",
			"description": "A kettle that boils water with sunlight.", "potential_value": 50, "estimated_cost": 5}, http.StatusCreated)

		ctx, stop := context.WithCancel(context.Background())
		stderr := &lockedBuffer{}
		code := make(chan int, 1)
		go func() {
			code <- cli.Execute(ctx, []string{"worker", "--demo", "--poll", "50ms", "--worker", "demo-1"}, nil, &bytes.Buffer{}, stderr,
				func(k string) string { return map[string]string{"FOUNDRY_URL": sys.BaseURL, "FOUNDRY_TOKEN": token}[k] })
		}()
		require.Eventually(t, func() bool {
			return api(t, sys, http.MethodGet, "/api/ideas/kettle", nil, http.StatusOK)["stage"] == "complete"
		}, 60*time.Second, 50*time.Millisecond, "the idea did not reach complete; the worker said:\n%s", stderr)
		stop()
		select {
		case c := <-code:
			require.Equal(t, cli.ExitOK, c, "a signal stops the worker cleanly: %s", stderr)
		case <-time.After(15 * time.Second):
			t.Fatal("the worker did not stop")
		}

		page := api(t, sys, http.MethodGet, "/api/agent/tasks?idea_id=kettle&limit=50", nil, http.StatusOK)
		tasks := page["tasks"].([]any)
		require.Len(t, tasks, 5, "spec, impl, test, review, review: one a stage")
		var last map[string]any
		for _, item := range tasks {
			id := item.(map[string]any)["id"].(string)
			tk := api(t, sys, http.MethodGet, "/api/agent/tasks/"+id, nil, http.StatusOK)
			require.Equal(t, "completed", tk["status"], "%v", tk)
			require.Equal(t, "demo-1", tk["worker_id"])
			require.Contains(t, tk["output"], "demo executor (no model was called)")
			require.Equal(t, "demo "+tk["task_type"].(string)+" artifact of task "+id, tk["artifact"], "stored with the task")
			c := tk["context"].(map[string]any)
			require.Equal(t, "Solar kettle", c["idea"].(map[string]any)["name"])
			require.Equal(t, "A kettle that boils water with sunlight.", c["idea"].(map[string]any)["description"])
			if prev, _ := c["previous"].([]any); len(prev) == 4 {
				last = tk
			}
		}
		require.NotNil(t, last, "the last task carries the four earlier stages' outputs")
		prev := last["context"].(map[string]any)["previous"].([]any)
		var types []string
		for _, p := range prev {
			p := p.(map[string]any)
			types = append(types, p["task_type"].(string))
			require.Contains(t, p["output"], "demo executor", "the earlier stage's output itself")
			require.Equal(t, "demo "+p["task_type"].(string)+" artifact of task "+p["task_id"].(string), p["artifact"], "and its artifact")
			require.Contains(t, last["prompt"], "artifact:\n"+p["artifact"].(string), "the prompt carries it too")
		}
		require.Equal(t, []string{"spec", "impl", "test", "review"}, types, "oldest first")
		require.Contains(t, last["output"], "earlier stages: 4", "the worker got them")
	})
}

// TestAWorkerRunsItsCommandWithTheTaskOnStdin: --exec runs the operator's
// command with the task's JSON on standard input (never in the command's
// text: a direction that is shell does nothing), its outcome from
// $FOUNDRY_RESULT_FILE; exit 0 completes the task with the output, any
// other fails it with the last line; --exit-when-idle stops when nothing
// is pending.
func TestAWorkerRunsItsCommandWithTheTaskOnStdin(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite), "-rate-poll-interval=0")
	token := api(t, sys, http.MethodPost, "/api/tokens", map[string]any{"name": "exec worker", "role": "worker"}, http.StatusCreated)["token"].(string)
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	impl := api(t, sys, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "add a timer $(touch " + pwned + ")",
		"task_type": "impl", "context": map[string]any{"idea_id": "kettle"}}, http.StatusCreated)["id"].(string)
	spec := api(t, sys, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "write the spec", "task_type": "spec"},
		http.StatusCreated)["id"].(string)

	command := `cat > "` + dir + `/$FOUNDRY_TASK_ID.json"; echo "foundry:progress 50 half way"; echo "working on $FOUNDRY_IDEA_ID"
echo '{"value_score": 0.5, "resource_cost": 2, "artifact": "https://example.com/pull/7"}' > "$FOUNDRY_RESULT_FILE"
if [ "$FOUNDRY_TASK_TYPE" != impl ]; then echo "no spec writer installed" >&2; exit 3; fi`
	stderr := &lockedBuffer{}
	code := cli.Execute(context.Background(), []string{"worker", "--exec", command, "--exit-when-idle", "--worker", "exec-1"}, nil,
		&bytes.Buffer{}, stderr, func(k string) string { return map[string]string{"FOUNDRY_URL": sys.BaseURL, "FOUNDRY_TOKEN": token}[k] })
	require.Equal(t, cli.ExitOK, code, stderr.String())

	got := api(t, sys, http.MethodGet, "/api/agent/tasks/"+impl, nil, http.StatusOK)
	require.Equal(t, "completed", got["status"], "%v", got)
	require.Contains(t, got["output"], "working on kettle")
	require.Equal(t, 0.5, got["value_score"])
	require.Equal(t, 2.0, got["resource_cost"])
	require.Equal(t, "https://example.com/pull/7", got["artifact"], "the artifact from the result file")
	var stdin map[string]any
	raw, err := os.ReadFile(filepath.Join(dir, impl+".json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &stdin))
	require.Equal(t, "add a timer $(touch "+pwned+")", stdin["direction"], "the task's JSON on standard input")
	_, err = os.Stat(pwned)
	require.True(t, os.IsNotExist(err), "the direction was not run as shell")

	failed := api(t, sys, http.MethodGet, "/api/agent/tasks/"+spec, nil, http.StatusOK)
	require.Equal(t, "failed", failed["status"])
	require.Equal(t, "no spec writer installed", failed["error_summary"], "the output's last line")
	require.Contains(t, stderr.String(), "task "+spec+" failed")
}

// TestAFailingTaskIsRetriedDiscardedAndRetriedByAnOperator: the loop on
// and a worker whose command fails every task of one idea. The idea's
// spec task is retried by its type's policy as the same task (each
// attempt's error kept), discarded after its last attempt, listed among
// the dead letters, retried by an operator with foundry tasks retry once
// the command is fixed, and completes; meanwhile the loop took the other
// idea to complete, and opened no second task for the failing one.
func TestAFailingTaskIsRetriedDiscardedAndRetriedByAnOperator(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine), "-rate-poll-interval=0", "-agent-loop",
			"-agent-loop-interval=100ms", "-agent-reap-interval=100ms", "-agent-retry-policies=spec=3:200ms:400ms",
			"-agent-loop-backoff=10m")
		token := api(t, sys, http.MethodPost, "/api/tokens", map[string]any{"name": "exec worker", "role": "worker"}, http.StatusCreated)["token"].(string)
		// The better idea fails; the loop picks it first.
		api(t, sys, http.MethodPost, "/api/ideas", map[string]any{"id": "broken", "name": "Broken kettle",
			"potential_value": 90, "estimated_cost": 1}, http.StatusCreated)
		api(t, sys, http.MethodPost, "/api/ideas", map[string]any{"id": "kettle", "name": "Solar kettle",
			"potential_value": 50, "estimated_cost": 5}, http.StatusCreated)

		fixed := filepath.Join(t.TempDir(), "fixed")
		command := `if [ "$FOUNDRY_IDEA_ID" = broken ] && [ ! -e "` + fixed + `" ]; then echo "HTTP 429 Too Many Requests" >&2; exit 1; fi
echo "done: $FOUNDRY_TASK_TYPE"`
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		stderr := &lockedBuffer{}
		code := make(chan int, 1)
		go func() {
			code <- cli.Execute(ctx, []string{"worker", "--exec", command, "--poll", "50ms", "--worker", "w1"}, nil, &bytes.Buffer{}, stderr,
				func(k string) string { return map[string]string{"FOUNDRY_URL": sys.BaseURL, "FOUNDRY_TOKEN": token}[k] })
		}()

		var dead map[string]any
		require.Eventually(t, func() bool {
			page := api(t, sys, http.MethodGet, "/api/agent/tasks?status=discarded", nil, http.StatusOK)
			if tasks := page["tasks"].([]any); len(tasks) == 1 {
				dead = tasks[0].(map[string]any)
			}
			return dead != nil
		}, 60*time.Second, 50*time.Millisecond, "no task was discarded; the worker said:\n%s", stderr)
		require.Equal(t, 3.0, dead["attempts"])
		require.Equal(t, 3.0, dead["max_attempts"])
		require.Equal(t, "attempt 3 of 3 failed: HTTP 429 Too Many Requests", dead["status_reason"])
		id := dead["id"].(string)
		tk := api(t, sys, http.MethodGet, "/api/agent/tasks/"+id, nil, http.StatusOK)
		require.Equal(t, "broken", tk["context"].(map[string]any)["idea_id"])
		errs := tk["attempt_errors"].([]any)
		require.Len(t, errs, 3, "every attempt's error is kept")
		for i, e := range errs {
			e := e.(map[string]any)
			require.Equal(t, float64(i+1), e["attempt"])
			require.Equal(t, "HTTP 429 Too Many Requests", e["error_summary"])
			require.Equal(t, "provider_error", e["error_category"])
		}

		// The loop meanwhile takes the other idea to complete.
		require.Eventually(t, func() bool {
			return api(t, sys, http.MethodGet, "/api/ideas/kettle", nil, http.StatusOK)["stage"] == "complete"
		}, 60*time.Second, 50*time.Millisecond, "the other idea did not reach complete; the worker said:\n%s", stderr)
		broken := api(t, sys, http.MethodGet, "/api/agent/tasks?idea_id=broken", nil, http.StatusOK)["tasks"].([]any)
		require.Len(t, broken, 1, "three attempts of one task, and the idea backed off: no second task")

		// The command is fixed; an operator retries the dead letter.
		require.NoError(t, os.WriteFile(fixed, nil, 0o600))
		admin := map[string]string{"FOUNDRY_URL": sys.BaseURL, "FOUNDRY_API_KEY": allinonetest.AdminKey}
		retried := okJSON(t, admin, "tasks", "retry", id)
		require.Equal(t, "pending", retried["status"])
		require.Equal(t, 4.0, retried["max_attempts"], "one attempt more")
		require.Eventually(t, func() bool {
			return api(t, sys, http.MethodGet, "/api/agent/tasks/"+id, nil, http.StatusOK)["status"] == "completed"
		}, 30*time.Second, 50*time.Millisecond, "the retried task did not complete; the worker said:\n%s", stderr)
		require.Eventually(t, func() bool {
			return api(t, sys, http.MethodGet, "/api/ideas/broken", nil, http.StatusOK)["stage"] == "specced"
		}, 30*time.Second, 50*time.Millisecond, "its completion advances the idea")

		stop()
		select {
		case c := <-code:
			require.Equal(t, cli.ExitOK, c, stderr.String())
		case <-time.After(15 * time.Second):
			t.Fatal("the worker did not stop")
		}
	})
}

// TestPromptsThroughTheCLI: foundry prompts create stores versions an
// operator writes, list and show read them, and the next task of the
// type is given the newest, rendered.
func TestPromptsThroughTheCLI(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite), "-rate-poll-interval=0")
	admin := map[string]string{"FOUNDRY_URL": sys.BaseURL, "FOUNDRY_API_KEY": allinonetest.AdminKey}
	first := okJSON(t, admin, "prompts", "create", "terse", "--type", "impl", "--text", "Do: {{direction}}")
	require.Equal(t, 1.0, first["version"])
	file := filepath.Join(t.TempDir(), "prompt.txt")
	require.NoError(t, os.WriteFile(file, []byte("Now: {{direction}}"), 0o600))
	second := okJSON(t, admin, "prompts", "create", "terse", "--type", "impl", "--file", file)
	require.Equal(t, 2.0, second["version"])
	require.Equal(t, "terse\n", ok(t, admin, "prompts", "list", "-o", "id"))
	old := okJSON(t, admin, "prompts", "show", "terse", "--version", "1")
	require.Equal(t, "Do: {{direction}}", old["text"])
	r := run(t, admin, "prompts", "create", "terse", "--type", "impl")
	require.Equal(t, cli.ExitUsage, r.code, r.stderr)

	tk := api(t, sys, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "add a timer", "task_type": "impl"}, http.StatusCreated)
	require.Equal(t, "Now: add a timer", tk["prompt"])
	require.Equal(t, "terse", tk["prompt_variant"])
	require.Equal(t, 2.0, tk["prompt_version"])
}
