package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// ideaTasks lists the idea's tasks through p: id -> status.
func ideaTasks(t *testing.T, p *allinonetest.Proc, idea string) map[string]string {
	t.Helper()
	items, _ := listPage(t, request(t, http.MethodGet, p.URL("/api/agent/tasks?limit=500&idea_id="+url.QueryEscape(idea)), nil), "tasks")
	out := map[string]string{}
	for _, m := range items {
		out[m["id"].(string)] = m["status"].(string)
	}
	return out
}

// requireOneOpen fails when the idea has more than one open task, and
// returns the open one ("" when none is).
func requireOneOpen(t *testing.T, tasks map[string]string) string {
	t.Helper()
	var open []string
	for id, st := range tasks {
		if st == "pending" || st == "running" || st == "needs_decision" {
			open = append(open, id)
		}
	}
	require.LessOrEqual(t, len(open), 1, "two open tasks for one idea: %v", tasks)
	if len(open) == 0 {
		return ""
	}
	return open[0]
}

// gone reports whether the process pid has ended (a zombie nobody reaped
// has ended too).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// TestAgentLoopLeaseLostStopsThePass runs two Foundry processes against one
// Postgres database with the loop on and the exec executor. The leader's
// first task runs a command that would sleep a minute. The leader is
// paused (SIGSTOP) for longer than its lease: the other process takes the
// lease over and leaves the idea alone, since its task is still open. When
// the old leader resumes, it finds that its lease may have expired while
// it was paused (or, renewing it, that it is taken), which stops its pass
// at once: the command is killed and the task failed with the cause. The new leader then opens the idea's next task. The idea never
// has two open tasks.
func TestAgentLoopLeaseLostStopsThePass(t *testing.T) {
	t.Parallel()
	if os.Getenv("FOUNDRY_TEST_DATABASE_URL") == "" {
		t.Skip("FOUNDRY_TEST_DATABASE_URL is not set: two processes on one database need Postgres")
	}
	dir := t.TempDir()
	// The first run anywhere sleeps (and says so); every later one works at once.
	script := `#!/bin/sh
dir="$(dirname "$0")"
if mkdir "$dir/first" 2>/dev/null; then
  echo $$ > "$dir/first/pid.tmp" && mv "$dir/first/pid.tmp" "$dir/first/pid"
  echo "the first run starts sleeping"
  sleep 60
  echo "the first run was not stopped" > "$dir/first/finished"
  exit 0
fi
echo "did the $1 work for idea $FOUNDRY_IDEA_ID"
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "work.sh"), []byte(script), 0o755))
	command := "/bin/sh " + filepath.Join(dir, "work.sh") + " {{task_type}}"
	routing, err := json.Marshal(map[string]any{"executors": map[string]any{
		"claude": map[string]any{"command": command}, "codex": map[string]any{"command": command},
	}})
	require.NoError(t, err)
	routingFile := filepath.Join(dir, "routing.json")
	require.NoError(t, os.WriteFile(routingFile, routing, 0o644))

	storage := allinonetest.NewStorage(t, database.Postgres)
	storage.DataDir = filepath.Join(storage.DataDir, "unused")
	flags := []string{"-agent-loop", "-agent-loop-interval=1s", "-agent-loop-executor=exec",
		"-agent-routing-file=" + routingFile, "-agent-exec-timeout=2m"}
	a := startFoundry(t, storage, nil, flags...)
	b := startFoundry(t, storage, nil, flags...)
	ra, _ := loopStatus(t, a)
	rb, _ := loopStatus(t, b)
	var leader string
	require.Eventually(t, func() bool {
		_, la := loopStatus(t, a)
		_, lb := loopStatus(t, b)
		leader = la
		return la != "" && la == lb
	}, 10*time.Second, 50*time.Millisecond, "the two processes never agreed on a leader")
	old, next, nextName := a, b, rb
	if leader == rb {
		old, next, nextName = b, a, ra
	}

	r := request(t, http.MethodPost, next.URL("/api/ideas"),
		map[string]any{"id": "paused", "name": "Paused", "potential_value": 30, "estimated_cost": 2})
	requireStatus(t, http.StatusCreated, r)
	var first string
	require.Eventually(t, func() bool {
		first = requireOneOpen(t, ideaTasks(t, next, "paused"))
		_, err := os.Stat(filepath.Join(dir, "first", "pid"))
		return first != "" && err == nil
	}, 10*time.Second, 20*time.Millisecond, "the leader never started the idea's first task")
	raw, err := os.ReadFile(filepath.Join(dir, "first", "pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, err)

	old.Signal(syscall.SIGSTOP)
	resumed := false
	defer func() {
		if !resumed {
			old.Signal(syscall.SIGCONT)
		}
	}()
	require.Eventually(t, func() bool {
		requireOneOpen(t, ideaTasks(t, next, "paused"))
		_, l := loopStatus(t, next)
		return l == nextName
	}, 15*time.Second, 50*time.Millisecond, "the other process did not take the lease over")
	// A few of the new leader's passes: the idea's task is still open, so
	// it opens none.
	for range 10 {
		require.Equal(t, first, requireOneOpen(t, ideaTasks(t, next, "paused")))
		time.Sleep(100 * time.Millisecond)
	}
	require.False(t, gone(pid), "the paused leader's command runs on meanwhile")

	old.Signal(syscall.SIGCONT)
	resumed = true
	resumedAt := time.Now()
	var task response
	require.Eventually(t, func() bool {
		requireOneOpen(t, ideaTasks(t, next, "paused"))
		task = request(t, http.MethodGet, next.URL("/api/agent/tasks/"+first), nil)
		requireStatus(t, http.StatusOK, task)
		return task.JSON["status"] != "running"
	}, 10*time.Second, 20*time.Millisecond, "the resumed leader did not stop its pass")
	t.Logf("the resumed leader stopped its pass %s after it resumed", time.Since(resumedAt).Round(time.Millisecond))
	require.Equal(t, "failed", task.JSON["status"])
	require.Equal(t, "executor_crash", task.JSON["error_category"])
	require.Contains(t, task.JSON["error_summary"], "the pipeline loop stopped the run: lost the pipeline loop's lease")
	require.Contains(t, task.JSON["output"], "the first run starts sleeping", "what the command printed is kept")
	require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 20*time.Millisecond, "the command was not killed")
	_, err = os.Stat(filepath.Join(dir, "first", "finished"))
	require.True(t, os.IsNotExist(err), "the command did not run to its end")

	// The idea is free again: the new leader opens its next task and
	// drives it on, one task at a time.
	require.Eventually(t, func() bool {
		requireOneOpen(t, ideaTasks(t, next, "paused"))
		r := request(t, http.MethodGet, next.URL("/api/ideas/paused"), nil)
		requireStatus(t, http.StatusOK, r)
		return r.JSON["stage"] != "none"
	}, 20*time.Second, 50*time.Millisecond, "the new leader did not move the idea on")
	_, l := loopStatus(t, old)
	require.Equal(t, nextName, l, "the resumed process agrees who leads")
}
