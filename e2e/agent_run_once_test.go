package e2e_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestAgentLoopRunOnceAnswers202ForALongPass: a real pass may run an
// exec command for minutes, and through the gateway it answered 504 once
// the request's time was up (the pass went on). Now a pass still running
// after FOUNDRY_AGENT_RUN_ONCE_WAIT answers 202 with its id, and the
// client polls GET /api/agent/loop until last_iteration carries that id.
func TestAgentLoopRunOnceAnswers202ForALongPass(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nsleep 2\necho done\n"), 0o755))
	command := "/bin/sh " + script
	routing, err := json.Marshal(map[string]any{"executors": map[string]any{
		"claude": map[string]any{"command": command}, "codex": map[string]any{"command": command},
	}})
	require.NoError(t, err)
	file := filepath.Join(dir, "routing.json")
	require.NoError(t, os.WriteFile(file, routing, 0o644))
	flags := []string{"-agent-loop-executor=exec", "-agent-routing-file=" + file, "-agent-exec-timeout=30s", "-agent-run-once-wait=200ms"}

	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		createIdea(t, sys, map[string]any{"id": "slow-idea", "name": "Slow idea", "potential_value": 50, "estimated_cost": 5})

		started := runLoopOnce(t, sys, map[string]any{}, http.StatusAccepted)
		require.Equal(t, "running", started["outcome"])
		require.Nil(t, started["idea_id"], "answered as the pass started, before it picked: %v", started)
		id, _ := started["id"].(string)
		require.Regexp(t, `^[0-9a-f]{32}$`, id)
		require.Empty(t, started["finished_at"], "it has not finished")
		require.NotEmpty(t, started["started_at"])

		// While it runs: it shows, a second pass is refused at once (it
		// was queued for the whole pass, and ran later), a dry run plans
		// beside it, anonymous too.
		status := request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
		requireStatus(t, http.StatusOK, status)
		require.Equal(t, true, status.JSON["running"], "a pass runs: %s", status.Raw)
		second := request(t, http.MethodPost, sys.URL("/api/agent/loop/run-once"), map[string]any{}, adminHeader)
		requireStatus(t, http.StatusConflict, second)
		require.Contains(t, second.JSON["detail"], id, "the refusal names the running pass")
		planned := request(t, http.MethodPost, sys.URL("/api/agent/loop/run-once"), map[string]any{"dry_run": true}, anonymous)
		requireStatus(t, http.StatusOK, planned)
		require.Equal(t, "idle", planned.JSON["outcome"], "the one idea's task is open: %s", planned.Raw)

		var last map[string]any
		require.Eventually(t, func() bool {
			r := request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
			requireStatus(t, http.StatusOK, r)
			last, _ = r.JSON["last_iteration"].(map[string]any)
			return last != nil && last["id"] == id
		}, 30*time.Second, 50*time.Millisecond, "the pass is recorded under the id the 202 gave")
		require.Equal(t, "advanced", last["outcome"], "detail: %v", last["detail"])
		require.Equal(t, started["started_at"], last["started_at"])
		require.NotEmpty(t, last["finished_at"])
		require.Equal(t, "specced", ideaStage(t, sys, "slow-idea"))

		dry := runLoopOnce(t, sys, map[string]any{"dry_run": true}, http.StatusOK)
		require.Nil(t, dry["id"], "a dry run is no pass of record")
		status = request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
		require.Equal(t, false, status.JSON["running"], "the loop is off and no pass runs")
	}, flags...)
}
