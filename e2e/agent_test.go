package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// agentTaskFields are the keys every full task carries.
var agentTaskFields = []string{"id", "task_id", "direction", "task_type", "status", "model", "executor", "tier", "command",
	"output", "progress_pct", "current_step", "decision_prompt", "error_summary", "error_category", "context", "worker_id",
	"prompt_variant", "value_score", "resource_cost", "duration_seconds", "created_at", "updated_at", "started_at",
	"completed_at", "attempts", "lease_expires_at"}

// createAgentTask posts a task and requires a 201.
func createAgentTask(t *testing.T, sys *allinonetest.System, body map[string]any) map[string]any {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), body)
	requireStatus(t, http.StatusCreated, r)
	return r.JSON
}

// patchAgentTask PATCHes a task and requires want.
func patchAgentTask(t *testing.T, sys *allinonetest.System, id string, body any, want int) response {
	t.Helper()
	r := request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+id), body)
	requireStatus(t, want, r)
	return r
}

// agentFieldError requires a 422 naming field.
func agentFieldError(t *testing.T, r response, field string) {
	t.Helper()
	requireStatus(t, http.StatusUnprocessableEntity, r)
	errs, _ := r.JSON["errors"].([]any)
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.(map[string]any)["field"].(string))
	}
	require.Contains(t, fields, field, "body: %s", r.Raw)
}

// listIDs returns the ids of a page of tasks ({tasks, pagination}), in
// order.
func listIDs(t *testing.T, r response) []string {
	t.Helper()
	items, _ := listPage(t, r, "tasks")
	out := []string{}
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return out
}

// taskPage is the pagination of a page of tasks.
func taskPage(t *testing.T, r response) map[string]any {
	t.Helper()
	_, page := listPage(t, r, "tasks")
	return page
}

func TestAgentTasks(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		var specID string
		t.Run("create answers 201 with the full routed task", func(t *testing.T) {
			got := createAgentTask(t, sys, map[string]any{"direction": "Write the spec for 'search'", "task_type": "spec",
				"context": map[string]any{"idea_id": "idea-x", "prompt_variant": "v1", "note": "hello"}})
			for _, f := range agentTaskFields {
				require.Contains(t, got, f)
			}
			specID = got["id"].(string)
			require.Regexp(t, `^[0-9a-f-]{36}$`, specID)
			require.Equal(t, specID, got["task_id"])
			require.Equal(t, "pending", got["status"])
			require.Equal(t, "claude", got["executor"])
			require.Equal(t, "strong", got["tier"])
			require.Equal(t, "claude-opus-4-1", got["model"])
			// The command runs the prompt rendered for the task (the spec
			// type's built-in template), quoted for the shell.
			require.True(t, strings.HasPrefix(got["command"].(string), `claude -p --model claude-opus-4-1 -- 'You are an agent carrying out the spec task`), got["command"])
			require.Contains(t, got["command"], `Task: Write the spec for '\''search'\''`)
			require.True(t, strings.HasSuffix(got["command"].(string), `</previous>'`), got["command"])
			require.Contains(t, got["prompt"], "Task: Write the spec for 'search'\n")
			require.Equal(t, map[string]any{"idea_id": "idea-x", "prompt_variant": "v1", "note": "hello"}, got["context"])
			require.Equal(t, "v1", got["prompt_variant"])
			for _, f := range []string{"error_summary", "error_category", "worker_id", "value_score", "resource_cost",
				"duration_seconds", "started_at", "completed_at", "lease_expires_at"} {
				require.Nil(t, got[f], f)
			}
			require.Equal(t, 0.0, got["attempts"])
			require.Equal(t, 0.0, got["progress_pct"])

			read := request(t, http.MethodGet, sys.URL("/api/agent/tasks/"+specID), nil)
			requireStatus(t, http.StatusOK, read)
			require.Equal(t, got, read.JSON)
		})

		t.Run("create validation is 422", func(t *testing.T) {
			agentFieldError(t, request(t, http.MethodPost, sys.URL("/api/agent/tasks"), map[string]any{"task_type": "spec"}), "direction")
			agentFieldError(t, request(t, http.MethodPost, sys.URL("/api/agent/tasks"), map[string]any{"direction": "x", "task_type": "dance"}), "task_type")
			agentFieldError(t, request(t, http.MethodPost, sys.URL("/api/agent/tasks"),
				map[string]any{"direction": "x", "task_type": "spec", "context": map[string]any{"idea_id": 5}}), "context.idea_id")
			for _, body := range []string{
				`{"direction": "x", "task_type": "spec", "context": 5}`,
				`{"direction": "x", "task_type": "spec", "priority": 1}`,
				`{"direction": "x", "task_type": `,
			} {
				requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/agent/tasks"), body))
			}
		})

		t.Run("unknown task is 404", func(t *testing.T) {
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/agent/tasks/nope"), nil))
			requireStatus(t, http.StatusNotFound, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/nope"), map[string]any{"progress_pct": 1}))
		})

		var implID, testID string
		t.Run("claim, conflict, fail with diagnosis", func(t *testing.T) {
			implID = createAgentTask(t, sys, map[string]any{"direction": "implement", "task_type": "impl"})["id"].(string)
			testID = createAgentTask(t, sys, map[string]any{"direction": "test", "task_type": "test"})["id"].(string)

			requireStatus(t, http.StatusBadRequest, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+implID), map[string]any{}))
			agentFieldError(t, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+implID), map[string]any{"progress_pct": 120}), "progress_pct")
			agentFieldError(t, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+implID), map[string]any{"status": "paused"}), "status")

			claimed := patchAgentTask(t, sys, implID, map[string]any{"status": "running", "worker_id": "worker-a"}, http.StatusOK).JSON
			require.Equal(t, "running", claimed["status"])
			require.Equal(t, "worker-a", claimed["worker_id"])
			require.Equal(t, 1.0, claimed["attempts"])
			require.NotNil(t, claimed["started_at"])
			require.NotNil(t, claimed["lease_expires_at"])
			patchAgentTask(t, sys, implID, map[string]any{"status": "running", "worker_id": "worker-b"}, http.StatusConflict)
			patchAgentTask(t, sys, implID, map[string]any{"progress_pct": 50, "current_step": "building"}, http.StatusOK)

			agentFieldError(t, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+implID), map[string]any{"status": "failed"}), "error_summary")
			agentFieldError(t, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+implID),
				map[string]any{"status": "failed", "error_summary": "", "output": ""}), "output")
			failed := patchAgentTask(t, sys, implID, map[string]any{"status": "failed",
				"output": "\nrunning go build\npanic: runtime error: index out of range\n"}, http.StatusOK).JSON
			require.Equal(t, "failed", failed["status"])
			require.Equal(t, "running go build", failed["error_summary"])
			require.Equal(t, "executor_crash", failed["error_category"])
			require.NotNil(t, failed["completed_at"])
			require.GreaterOrEqual(t, failed["duration_seconds"].(float64), 0.0)
			require.Nil(t, failed["lease_expires_at"])
			patchAgentTask(t, sys, implID, map[string]any{"status": "completed"}, http.StatusConflict)

			given := patchAgentTask(t, sys, testID, map[string]any{"status": "failed", "error_summary": "quota exhausted"}, http.StatusOK).JSON
			require.Equal(t, "quota exhausted", given["error_summary"])
			require.Equal(t, "provider_error", given["error_category"])
		})

		var decideID string
		t.Run("list filters, limits and attention", func(t *testing.T) {
			decideID = createAgentTask(t, sys, map[string]any{"direction": "decide", "task_type": "review"})["id"].(string)
			patchAgentTask(t, sys, decideID, map[string]any{"status": "needs_decision", "decision_prompt": "split it?"}, http.StatusOK)

			all := request(t, http.MethodGet, sys.URL("/api/agent/tasks"), nil)
			require.Equal(t, []string{decideID, testID, implID, specID}, listIDs(t, all), "newest first")
			require.Equal(t, wantPage(50, 0, 4, false), taskPage(t, all))
			for _, it := range all.JSON["tasks"].([]any) {
				item := it.(map[string]any)
				require.Contains(t, item, "error_summary")
				require.Contains(t, item, "error_category")
			}
			first := all.JSON["tasks"].([]any)[3].(map[string]any)
			require.Nil(t, first["error_summary"])
			require.Nil(t, first["error_category"])

			failed := request(t, http.MethodGet, sys.URL("/api/agent/tasks?status=failed"), nil)
			require.Equal(t, []string{testID, implID}, listIDs(t, failed))
			require.Equal(t, wantPage(50, 0, 2, false), taskPage(t, failed))
			require.Equal(t, "executor_crash", failed.JSON["tasks"].([]any)[1].(map[string]any)["error_category"])
			require.Equal(t, []string{implID}, listIDs(t, request(t, http.MethodGet, sys.URL("/api/agent/tasks?task_type=impl"), nil)))
			paged := request(t, http.MethodGet, sys.URL("/api/agent/tasks?limit=2&offset=1"), nil)
			require.Equal(t, []string{testID, implID}, listIDs(t, paged))
			page, next := withoutCursor(t, taskPage(t, paged))
			require.Equal(t, wantPage(2, 1, 4, true), page)
			rest := request(t, http.MethodGet, sys.URL("/api/agent/tasks?limit=2&cursor="+next), nil)
			require.Equal(t, []string{specID}, listIDs(t, rest), "the cursor reads on after the page's last task")
			require.Equal(t, wantPage(2, 3, 4, false), taskPage(t, rest), "its offset is the one its cursor carries")
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/agent/tasks?offset=1&cursor="+next), nil), "offset")
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/agent/tasks?cursor=not-a-cursor"), nil), "cursor")
			require.Equal(t, wantPage(500, 0, 4, false), taskPage(t, request(t, http.MethodGet, sys.URL("/api/agent/tasks?limit=500"), nil)))
			for _, q := range []string{"limit=0", "limit=501", "limit=-1", "offset=-1", "status=paused", "task_type=dance"} {
				requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/agent/tasks?"+q), nil))
			}

			att := request(t, http.MethodGet, sys.URL("/api/agent/tasks/attention"), nil)
			require.Equal(t, []string{decideID, testID, implID}, listIDs(t, att), "only failed and needs_decision")
			require.Equal(t, wantPage(50, 0, 3, false), taskPage(t, att))
			require.Equal(t, "split it?", att.JSON["tasks"].([]any)[0].(map[string]any)["decision_prompt"])

			count := request(t, http.MethodGet, sys.URL("/api/agent/tasks/count"), nil)
			requireStatus(t, http.StatusOK, count)
			require.Equal(t, 4.0, count.JSON["total"])
			require.Equal(t, map[string]any{"pending": 1.0, "running": 0.0, "completed": 0.0, "failed": 2.0, "timed_out": 0.0,
				"needs_decision": 1.0, "discarded": 0.0, "cancelled": 0.0}, count.JSON["by_status"])
		})

		t.Run("pull claims hand out the oldest pending task once", func(t *testing.T) {
			var ids []string
			for i := range 3 {
				ids = append(ids, createAgentTask(t, sys, map[string]any{"direction": fmt.Sprint("verify ", i), "task_type": "verify"})["id"].(string))
			}
			r := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "puller", "task_types": []string{"verify"},
				"lease_seconds": 120})
			requireStatus(t, http.StatusOK, r)
			task := r.JSON["task"].(map[string]any)
			require.Equal(t, ids[0], task["id"])
			require.Equal(t, "running", task["status"])
			require.Equal(t, "puller", task["worker_id"])

			var (
				wg  sync.WaitGroup
				mu  sync.Mutex
				got = map[string]int{}
			)
			for w := range 4 {
				wg.Go(func() {
					r := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": fmt.Sprint("w", w),
						"task_types": []string{"verify"}})
					mu.Lock()
					defer mu.Unlock()
					if tk, ok := r.JSON["task"].(map[string]any); ok {
						got[tk["id"].(string)]++
					}
				})
			}
			wg.Wait()
			require.Equal(t, map[string]int{ids[1]: 1, ids[2]: 1}, got)

			none := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "puller", "task_types": []string{"verify"}})
			requireStatus(t, http.StatusOK, none)
			require.Equal(t, map[string]any{"task": nil}, none.JSON, "nothing pending: a null task")
			agentFieldError(t, request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"task_types": []string{"verify"}}), "worker_id")
			agentFieldError(t, request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "w", "task_types": []string{"dance"}}), "task_types")
			agentFieldError(t, request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "w", "lease_seconds": 0}), "lease_seconds")

			renewed := patchAgentTask(t, sys, ids[0], map[string]any{"progress_pct": 10, "worker_id": "puller"}, http.StatusOK).JSON
			require.Equal(t, "running", renewed["status"])
			patchAgentTask(t, sys, ids[0], map[string]any{"progress_pct": 20, "worker_id": "intruder"}, http.StatusConflict)
		})

		t.Run("pipeline status, metrics, diagnostics", func(t *testing.T) {
			ps := request(t, http.MethodGet, sys.URL("/api/agent/pipeline-status"), nil)
			requireStatus(t, http.StatusOK, ps)
			require.Equal(t, 3.0, ps.JSON["running"])
			require.Equal(t, 2.0, ps.JSON["failed"])
			require.Equal(t, 7.0, ps.JSON["total"])
			require.Equal(t, 0.0, ps.JSON["success_rate"])
			require.NotNil(t, ps.JSON["longest_pending_seconds"])
			require.Equal(t, map[string]any{"stuck": false, "repeated_failures": false, "low_success_rate": false, "flags": []any{}},
				ps.JSON["attention"])

			m := request(t, http.MethodGet, sys.URL("/api/agent/metrics"), nil)
			requireStatus(t, http.StatusOK, m)
			require.Equal(t, 7.0, m.JSON["window_days"])
			et := m.JSON["execution_time"].(map[string]any)
			require.Equal(t, 2.0, et["sample_count"])
			require.NotNil(t, et["p50_seconds"])
			sr := m.JSON["success_rate"].(map[string]any)
			require.Equal(t, map[string]any{"completed": 0.0, "failed": 2.0, "rate": 0.0}, sr["overall"])
			require.Equal(t, map[string]any{"completed": 0.0, "failed": 1.0, "rate": 0.0}, sr["by_task_type"].(map[string]any)["impl"])
			usage := m.JSON["usage"].(map[string]any)
			require.Equal(t, 7.0, usage["tasks_created"])
			require.Equal(t, 2.0, usage["tasks_finished"])
			require.Equal(t, map[string]any{"claude": 5.0, "codex": 2.0}, usage["tasks_by_executor"])
			requireStatus(t, http.StatusOK, request(t, http.MethodGet, sys.URL("/api/agent/metrics?window_days=365"), nil))
			for _, q := range []string{"window_days=0", "window_days=366", "window_days=x"} {
				requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/agent/metrics?"+q), nil))
			}

			daily := request(t, http.MethodGet, sys.URL("/api/agent/metrics/daily?days=2"), nil)
			requireStatus(t, http.StatusOK, daily)
			series := daily.JSON["days"].([]any)
			require.Len(t, series, 2, "yesterday and today")
			today := series[1].(map[string]any)
			require.Equal(t, time.Now().UTC().Format(time.DateOnly), today["day"])
			require.Equal(t, 7.0, today["created"])
			require.Equal(t, 0.0, today["completed"])
			require.Equal(t, 2.0, today["failed"])
			require.Equal(t, 0.0, today["success_rate"], "two failed, none completed")
			require.NotNil(t, today["p50_seconds"])
			yesterday := series[0].(map[string]any)
			require.Equal(t, 0.0, yesterday["created"])
			require.Nil(t, yesterday["success_rate"], "nothing finished")
			require.Nil(t, yesterday["p95_seconds"])
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/agent/metrics/daily?days=367"), nil), "days")

			d := request(t, http.MethodGet, sys.URL("/api/agent/diagnostics-completeness"), nil)
			requireStatus(t, http.StatusOK, d)
			require.Equal(t, 2.0, d.JSON["total_failed"])
			require.Equal(t, 2.0, d.JSON["with_diagnostics"])
			require.Equal(t, 0.0, d.JSON["missing_pct"])
			require.Equal(t, map[string]any{"timeout": 0.0, "executor_crash": 1.0, "provider_error": 1.0, "validation_failure": 0.0,
				"unknown": 0.0}, d.JSON["by_category"])
		})

		t.Run("prompt A/B statistics", func(t *testing.T) {
			// 0.1 + 0.2 and 1.9 + 0.1: sums written without their addition's
			// noise (0.30000000000000004).
			for _, vc := range [][2]float64{{0.1, 1.9}, {0.2, 0.1}} {
				id := createAgentTask(t, sys, map[string]any{"direction": "reflect", "task_type": "reflect",
					"context": map[string]any{"prompt_variant": "terse"}})["id"].(string)
				patchAgentTask(t, sys, id, map[string]any{"status": "completed", "value_score": vc[0], "resource_cost": vc[1]}, http.StatusOK)
			}
			r := request(t, http.MethodGet, sys.URL("/api/agent/prompt-ab/stats"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, []any{map[string]any{"variant": "terse", "samples": 2.0, "total_value": 0.3, "total_cost": 2.0, "roi": 0.15,
				"selection_probability": 1.0, "blocked": false, "exploring": true, "task_type": "", "version": 0.0, "probe": ""}},
				r.JSON["variants"])
		})

		t.Run("the loop is off by default and waits for external workers", func(t *testing.T) {
			r := request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, false, r.JSON["enabled"])
			require.Equal(t, false, r.JSON["running"])
			require.Equal(t, "external", r.JSON["executor"])
			require.Equal(t, 30.0, r.JSON["interval_seconds"])
			// No idea in the portfolio: a pass has nothing to do.
			it := request(t, http.MethodPost, sys.URL("/api/agent/loop/run-once"), map[string]any{}, adminHeader)
			requireStatus(t, http.StatusOK, it)
			require.Equal(t, "idle", it.JSON["outcome"])
			require.Equal(t, "no eligible idea among 0 candidates (complete, or a task is already open)", it.JSON["detail"])
		})
	}, "-agent-outbox-interval=100ms")
}

func TestAgentCompletionAdvancesItsIdeaOnce(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		idea := createIdea(t, sys, map[string]any{"name": "Agent-driven idea", "potential_value": 50, "estimated_cost": 5})
		ideaID := idea["id"].(string)
		require.Equal(t, "none", idea["stage"])
		stage := func() string {
			r := request(t, http.MethodGet, sys.URL("/api/ideas/"+ideaID), nil)
			requireStatus(t, http.StatusOK, r)
			return r.JSON["stage"].(string)
		}

		task := createAgentTask(t, sys, map[string]any{"direction": "spec it", "task_type": "spec", "context": map[string]any{"idea_id": ideaID}})
		id := task["id"].(string)
		patchAgentTask(t, sys, id, map[string]any{"status": "running", "worker_id": "w"}, http.StatusOK)
		require.Equal(t, "none", stage(), "a running task does not advance its idea")
		done := patchAgentTask(t, sys, id, map[string]any{"status": "completed", "output": "spec written"}, http.StatusOK).JSON
		require.Equal(t, "completed", done["status"])
		require.Equal(t, 100.0, done["progress_pct"])

		require.Eventually(t, func() bool { return stage() == "specced" }, 10*time.Second, 50*time.Millisecond)
		patchAgentTask(t, sys, id, map[string]any{"status": "completed", "output": "spec written"}, http.StatusOK)
		time.Sleep(500 * time.Millisecond) // several delivery ticks
		require.Equal(t, "specced", stage(), "the idea moved exactly one step")

		failing := createAgentTask(t, sys, map[string]any{"direction": "impl it", "task_type": "impl", "context": map[string]any{"idea_id": ideaID}})
		patchAgentTask(t, sys, failing["id"].(string), map[string]any{"status": "failed", "output": "tests failed"}, http.StatusOK)
		time.Sleep(300 * time.Millisecond)
		require.Equal(t, "specced", stage(), "a failed task does not advance its idea")

		impl := createAgentTask(t, sys, map[string]any{"direction": "impl it", "task_type": "impl", "context": map[string]any{"idea_id": ideaID}})
		patchAgentTask(t, sys, impl["id"].(string), map[string]any{"status": "completed"}, http.StatusOK)
		require.Eventually(t, func() bool { return stage() == "implementing" }, 10*time.Second, 50*time.Millisecond)
	}, "-agent-outbox-interval=100ms")
}
