package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// loopRouting writes a routing file whose executors all run work.sh (given
// the task type), and returns the flags that make the loop run it with the
// exec executor. work.sh fails for the task types listed in the file
// "fail" beside it (one per line) and otherwise prints what it did.
func loopRouting(t *testing.T, failTypes ...string) (dir string, flags []string) {
	t.Helper()
	dir = t.TempDir()
	script := `#!/bin/sh
if grep -qx "$1" "$(dirname "$0")/fail" 2>/dev/null; then
  echo "validation failed: the $1 step found 2 problems" >&2
  exit 3
fi
echo "did the $1 work for idea $FOUNDRY_IDEA_ID (task $FOUNDRY_TASK_ID)"
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "work.sh"), []byte(script), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fail"), []byte(strings.Join(failTypes, "\n")+"\n"), 0o644))
	command := "/bin/sh " + filepath.Join(dir, "work.sh") + " {{task_type}}"
	routing, err := json.Marshal(map[string]any{"executors": map[string]any{
		"claude": map[string]any{"command": command}, "codex": map[string]any{"command": command},
	}})
	require.NoError(t, err)
	file := filepath.Join(dir, "routing.json")
	require.NoError(t, os.WriteFile(file, routing, 0o644))
	return dir, []string{"-agent-loop-executor=exec", "-agent-routing-file=" + file, "-agent-exec-timeout=30s"}
}

func runLoopOnce(t *testing.T, sys *allinonetest.System, body map[string]any, want int) map[string]any {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/agent/loop/run-once"), body, adminHeader)
	requireStatus(t, want, r)
	return r.JSON // the iteration itself on a 200
}

func ideaStage(t *testing.T, sys *allinonetest.System, id string) string {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/ideas/"+id), nil)
	requireStatus(t, http.StatusOK, r)
	return r.JSON["stage"].(string)
}

func TestAgentLoopRunOnceDrivesAnIdeaToComplete(t *testing.T) {
	t.Parallel()
	dir, flags := loopRouting(t)
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		idea := createIdea(t, sys, map[string]any{"id": "loop-me", "name": "Loop me", "potential_value": 50, "estimated_cost": 5})
		require.Equal(t, "none", idea["stage"])

		t.Run("before any pass the status says so", func(t *testing.T) {
			r := request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, false, r.JSON["enabled"])
			require.Equal(t, false, r.JSON["running"])
			require.Equal(t, "exec", r.JSON["executor"])
			require.Equal(t, "0", fmt.Sprint(r.JSON["iterations"]))
			require.Nil(t, r.JSON["last_iteration"])
			require.Nil(t, r.JSON["last_run_at"])
			require.Nil(t, r.JSON["leader"])
		})

		t.Run("a pass needs the admin key; a dry run does not and writes nothing", func(t *testing.T) {
			r := request(t, http.MethodPost, sys.URL("/api/agent/loop/run-once"), map[string]any{}, anonymous)
			requireStatus(t, http.StatusUnauthorized, r)
			require.NotEmpty(t, r.JSON["detail"])

			r = request(t, http.MethodPost, sys.URL("/api/agent/loop/run-once"), map[string]any{"dry_run": true}, anonymous)
			requireStatus(t, http.StatusOK, r)
			it := r.JSON
			require.Equal(t, "planned", it["outcome"])
			require.Equal(t, "loop-me", it["idea_id"])
			require.Equal(t, "spec", it["task_type"])
			require.Nil(t, it["task_id"])
			count := request(t, http.MethodGet, sys.URL("/api/agent/tasks/count"), nil)
			require.Equal(t, "0", fmt.Sprint(count.JSON["total"]))
		})

		// none -> specced -> implementing -> testing -> reviewing -> complete.
		steps := []struct{ before, typ, after string }{
			{"none", "spec", "specced"}, {"specced", "impl", "implementing"}, {"implementing", "test", "testing"},
			{"testing", "review", "reviewing"}, {"reviewing", "review", "complete"},
		}
		var taskIDs []string
		for _, s := range steps {
			it := runLoopOnce(t, sys, map[string]any{}, http.StatusOK)
			require.Equal(t, "advanced", it["outcome"], "detail: %v", it["detail"])
			require.Equal(t, "loop-me", it["idea_id"])
			require.Equal(t, s.before, it["stage_before"])
			require.Equal(t, s.typ, it["task_type"])
			require.Equal(t, s.after, it["stage_after"])
			require.Equal(t, 4.1667, it["idea_score"], "the portfolio's score: 50 × 0.5 / (5 + 1)")
			taskIDs = append(taskIDs, it["task_id"].(string))
			require.Equal(t, s.after, ideaStage(t, sys, "loop-me"))
		}

		t.Run("each task ran the routed command and completed, claimed by the loop", func(t *testing.T) {
			for i, id := range taskIDs {
				r := request(t, http.MethodGet, sys.URL("/api/agent/tasks/"+id), nil)
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, "completed", r.JSON["status"])
				require.Equal(t, steps[i].typ, r.JSON["task_type"])
				require.Equal(t, "pipeline-loop", r.JSON["worker_id"])
				require.Equal(t, fmt.Sprintf("did the %s work for idea loop-me (task %s)\n", steps[i].typ, id), r.JSON["output"])
				require.Equal(t, "loop-me", r.JSON["context"].(map[string]any)["idea_id"])
				require.Equal(t, "pipeline_loop", r.JSON["context"].(map[string]any)["source"])
				require.Contains(t, r.JSON["command"], filepath.Join(dir, "work.sh"))
			}
		})

		t.Run("a complete idea leaves the loop idle", func(t *testing.T) {
			it := runLoopOnce(t, sys, map[string]any{}, http.StatusOK)
			require.Equal(t, "idle", it["outcome"])
			require.Nil(t, it["idea_id"])
			require.Nil(t, it["task_id"])
		})

		t.Run("the status counts every pass and shows the last", func(t *testing.T) {
			r := request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, "6", fmt.Sprint(r.JSON["iterations"]))
			require.Equal(t, map[string]any{"advanced": 5.0, "task_failed": 0.0, "idle": 1.0, "error": 0.0}, r.JSON["passes_by_outcome"], "counts are JSON numbers")
			require.Equal(t, "idle", r.JSON["last_iteration"].(map[string]any)["outcome"])
			require.NotNil(t, r.JSON["last_run_at"])
			// A manual pass took the lease for this replica.
			require.Equal(t, r.JSON["replica"], r.JSON["leader"])
		})

		t.Run("the pipeline metrics saw the five completions", func(t *testing.T) {
			r := request(t, http.MethodGet, sys.URL("/api/agent/tasks/count"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, "5", fmt.Sprint(r.JSON["total"]))
			require.Equal(t, "5", fmt.Sprint(r.JSON["by_status"].(map[string]any)["completed"]))
		})
	}, flags...)
}

func TestAgentLoopFailedTaskLeavesTheIdeaWhereItWas(t *testing.T) {
	t.Parallel()
	_, flags := loopRouting(t, "impl")
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		createIdea(t, sys, map[string]any{"id": "stuck", "name": "Stuck", "potential_value": 10, "estimated_cost": 1})
		it := runLoopOnce(t, sys, map[string]any{}, http.StatusOK)
		require.Equal(t, "advanced", it["outcome"])
		require.Equal(t, "specced", it["stage_after"])

		it = runLoopOnce(t, sys, map[string]any{}, http.StatusOK)
		require.Equal(t, "task_failed", it["outcome"])
		require.Equal(t, "impl", it["task_type"])
		require.Equal(t, "specced", it["stage_after"])
		require.Equal(t, "validation failed: the impl step found 2 problems", it["detail"])
		require.Equal(t, "specced", ideaStage(t, sys, "stuck"))

		r := request(t, http.MethodGet, sys.URL("/api/agent/tasks/"+it["task_id"].(string)), nil)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "failed", r.JSON["status"])
		require.Equal(t, "validation_failure", r.JSON["error_category"])
		require.Equal(t, "validation failed: the impl step found 2 problems", r.JSON["error_summary"])

		att := request(t, http.MethodGet, sys.URL("/api/agent/tasks/attention"), nil)
		require.Equal(t, []string{it["task_id"].(string)}, listIDs(t, att))
	}, flags...)
}

func TestAgentLoopInTheBackgroundCompletesAnIdea(t *testing.T) {
	t.Parallel()
	_, flags := loopRouting(t)
	flags = append(flags, "-agent-loop", "-agent-loop-interval=100ms")
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		createIdea(t, sys, map[string]any{"id": "auto", "name": "Automatic", "potential_value": 30, "estimated_cost": 2})
		require.Eventually(t, func() bool { return ideaStage(t, sys, "auto") == "complete" }, 30*time.Second, 50*time.Millisecond)

		// The idea is complete once the last task advanced it; the pass
		// that ran the task records itself right after.
		var r response
		require.Eventually(t, func() bool {
			r = request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
			return fmt.Sprint(r.JSON["passes_by_outcome"].(map[string]any)["advanced"]) == "5"
		}, 10*time.Second, 20*time.Millisecond)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, true, r.JSON["enabled"])
		require.Equal(t, true, r.JSON["running"])
		require.Equal(t, 0.1, r.JSON["interval_seconds"])
		require.Equal(t, r.JSON["replica"], r.JSON["leader"])

		// The metrics endpoint counts the passes too.
		m := request(t, http.MethodGet, sys.URL("/api/agent/tasks/count"), nil)
		require.Equal(t, "5", fmt.Sprint(m.JSON["by_status"].(map[string]any)["completed"]))
	}, flags...)
}

func TestAgentLoopWithExternalWorkersCompletesAnIdea(t *testing.T) {
	t.Parallel()
	// The loop's lease lasts three intervals: at 50 ms, a renewal a busy
	// machine delayed past 150 ms lost it, and that pass ended in error
	// while the worker's task still advanced the idea (250 ms: 750 ms).
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		createIdea(t, sys, map[string]any{"id": "by-hand", "name": "By hand", "potential_value": 30, "estimated_cost": 2})
		// A worker: claim what the loop queued, finish it; until the idea is complete.
		var done []string
		require.Eventually(t, func() bool {
			c := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "w1"})
			requireStatus(t, http.StatusOK, c)
			if task, ok := c.JSON["task"].(map[string]any); ok {
				require.Equal(t, "by-hand", task["context"].(map[string]any)["idea_id"])
				patchAgentTask(t, sys, task["id"].(string), map[string]any{"status": "completed", "worker_id": "w1",
					"output": "done by w1"}, http.StatusOK)
				done = append(done, task["task_type"].(string))
			}
			return ideaStage(t, sys, "by-hand") == "complete"
		}, 30*time.Second, 20*time.Millisecond)
		require.Equal(t, []string{"spec", "impl", "test", "review", "review"}, done)

		// The outbox may advance the idea before the loop's pass, which
		// polls the task, records itself.
		var last response
		if !assert.Eventually(t, func() bool {
			last = request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
			requireStatus(t, http.StatusOK, last)
			require.Equal(t, "external", last.JSON["executor"])
			return fmt.Sprint(last.JSON["passes_by_outcome"].(map[string]any)["advanced"]) == "5"
		}, 30*time.Second, 20*time.Millisecond) {
			t.Fatalf("five passes advanced the idea, but the loop says: %s", last.Raw)
		}
	}, "-agent-loop", "-agent-loop-interval=250ms")
}
