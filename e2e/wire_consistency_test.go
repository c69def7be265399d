package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestAWriteAnswersWhatALaterReadReturns: a POST's answer carried
// nanosecond timestamps while a GET of the same row answered microseconds
// (the portfolio did not truncate as the ledger and agent do), so a client
// comparing them saw a change that never happened; and 64-bit counts came
// out as JSON strings ("iterations":"7").
func TestAWriteAnswersWhatALaterReadReturns(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		created := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": "Same answer", "potential_value": 10})
		requireStatus(t, http.StatusCreated, created)
		read := request(t, http.MethodGet, sys.URL("/api/ideas/"+created.JSON["id"].(string)), nil)
		requireStatus(t, http.StatusOK, read)
		require.Equal(t, created.JSON["created_at"], read.JSON["created_at"])
		require.Equal(t, created.JSON["updated_at"], read.JSON["updated_at"])
		patched := request(t, http.MethodPatch, sys.URL("/api/ideas/"+created.JSON["id"].(string)), map[string]any{"description": "again"})
		requireStatus(t, http.StatusOK, patched)
		read = request(t, http.MethodGet, sys.URL("/api/ideas/"+created.JSON["id"].(string)), nil)
		require.Equal(t, patched.JSON["updated_at"], read.JSON["updated_at"])

		loop := request(t, http.MethodGet, sys.URL("/api/agent/loop"), nil)
		requireStatus(t, http.StatusOK, loop)
		require.Equal(t, 0.0, loop.JSON["iterations"], "a count is a JSON number")
		require.Equal(t, map[string]any{"advanced": 0.0, "task_failed": 0.0, "idle": 0.0, "error": 0.0}, loop.JSON["passes_by_outcome"])
	})
}
