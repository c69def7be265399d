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

// TestIdempotencyKeysAreTheCredentials is the issue's: the administrator
// key replaying an operator token's Idempotency-Key got the operator's
// task. A key is the credential's that sent it (Stripe's rule): the same
// key and body from another credential is a request of its own, for a
// task create and for a contribution alike.
func TestIdempotencyKeysAreTheCredentials(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		operator, _ := apiToken(t, sys.BaseURL, "ops-1", "operator")
		body := map[string]any{"direction": "write the spec", "task_type": "spec"}
		mine := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), body, operator, "Idempotency-Key: shared-1")
		requireStatus(t, http.StatusCreated, mine)
		theirs := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), body, asAdmin, "Idempotency-Key: shared-1")
		requireStatus(t, http.StatusCreated, theirs)
		require.NotEqual(t, mine.JSON["id"], theirs.JSON["id"], "the administrator's key is its own")
		again := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), body, operator, "Idempotency-Key: shared-1")
		require.Equal(t, mine.JSON["id"], again.JSON["id"], "the operator's retry still answers its own")

		ada := registerUser(t, sys, "ada")
		asset := request(t, http.MethodPost, sys.URL("/api/assets"), map[string]any{"type": "CODE", "name": "billing"})
		requireStatus(t, http.StatusCreated, asset)
		c := map[string]any{"contributor_id": ada.id, "asset_id": asset.JSON["id"], "cost_amount": 5}
		own := request(t, http.MethodPost, sys.URL("/api/contributions"), c, ada.bearer(), "Idempotency-Key: c-1")
		requireStatus(t, http.StatusCreated, own)
		byOperator := request(t, http.MethodPost, sys.URL("/api/contributions"), c, operator, "Idempotency-Key: c-1")
		requireStatus(t, http.StatusCreated, byOperator)
		require.NotEqual(t, own.JSON["id"], byOperator.JSON["id"], "the operator's key is not the contributor's")
		retry := request(t, http.MethodPost, sys.URL("/api/contributions"), c, ada.bearer(), "Idempotency-Key: c-1")
		require.Equal(t, own.JSON["id"], retry.JSON["id"])
	})
}
