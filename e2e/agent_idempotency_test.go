package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestTaskIdempotencyKey: a worker that lost the answer to a create or a
// claim sends it again with the same Idempotency-Key and gets the same
// task, and nothing more is created or claimed.
func TestTaskIdempotencyKey(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		body := map[string]any{"direction": "write the spec", "task_type": "spec", "context": map[string]any{"k": "v"}}
		one := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), body, "Idempotency-Key: create-1")
		requireStatus(t, http.StatusCreated, one)
		two := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), body, "Idempotency-Key: create-1")
		requireStatus(t, http.StatusCreated, two)
		require.Equal(t, string(one.Raw), string(two.Raw), "the identical answer, with the first's status")
		other := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), map[string]any{"direction": "x", "task_type": "spec"},
			"Idempotency-Key: create-1")
		requireFieldError(t, other, "Idempotency-Key")
		spare := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), body)
		requireStatus(t, http.StatusCreated, spare)

		count := request(t, http.MethodGet, sys.URL("/api/agent/tasks/count"), nil)
		requireStatus(t, http.StatusOK, count)
		require.Equal(t, 2.0, count.JSON["total"], "the retried create made one task; the keyless one another")

		claim := map[string]any{"worker_id": "w1"}
		c1 := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), claim, "Idempotency-Key: claim-1")
		requireStatus(t, http.StatusOK, c1)
		c2 := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), claim, "Idempotency-Key: claim-1")
		requireStatus(t, http.StatusOK, c2)
		require.Equal(t, string(c1.Raw), string(c2.Raw))
		require.Equal(t, one.JSON["id"], c1.JSON["task"].(map[string]any)["id"], "the oldest task")

		left := request(t, http.MethodGet, sys.URL("/api/agent/tasks/"+spare.JSON["id"].(string)), nil)
		requireStatus(t, http.StatusOK, left)
		require.Equal(t, "pending", left.JSON["status"], "the retried claim took no second task")
		// Another worker's claim-1 is its own.
		c3 := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "w2"}, "Idempotency-Key: claim-1")
		requireStatus(t, http.StatusOK, c3)
		require.Equal(t, spare.JSON["id"], c3.JSON["task"].(map[string]any)["id"])
	})
}
