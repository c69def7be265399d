package e2e_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestHardeningPortfolioPatchCannotSkipStages: PATCH used to be open to
// anyone, so it could only keep the stage or move it to the next one. Now
// stages move by operators only: without a credential a PATCH is a 401, a
// contributor's PATCH that names a stage is a 403 even on the idea it
// created (and its ideas start at none), and an operator's PATCH sets any
// stage, adjacent or not, as the explicit stage endpoint does.
func TestHardeningPortfolioPatchCannotSkipStages(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "stage_ada")
		requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/ideas"),
			map[string]any{"id": "ahead", "name": "Ahead", "stage": "testing"}, ada.auth()))
		requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/ideas/ahead"), nil))
		mine := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"id": "jump", "name": "Jump"}, ada.auth())
		requireStatus(t, http.StatusCreated, mine)
		require.Equal(t, "none", mine.JSON["stage"])
		before := request(t, http.MethodGet, sys.URL("/api/ideas/jump"), nil)
		requireStatus(t, http.StatusOK, before)

		for _, stage := range []string{"none", "specced", "implementing", "complete"} {
			body := map[string]any{"stage": stage, "name": "renamed"}
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPatch, sys.URL("/api/ideas/jump"), body, anonymous))
			r := request(t, http.MethodPatch, sys.URL("/api/ideas/jump"), body, ada.auth())
			requireStatus(t, http.StatusForbidden, r)
			require.Contains(t, r.JSON["detail"], "operators", "the creator may not move its own idea's stage")
		}
		after := request(t, http.MethodGet, sys.URL("/api/ideas/jump"), nil)
		require.Equal(t, string(before.Raw), string(after.Raw), "a refused PATCH changes nothing")
		r := request(t, http.MethodPatch, sys.URL("/api/ideas/jump"), map[string]any{"name": "renamed"}, ada.auth())
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "renamed", r.JSON["name"], "the creator edits the rest")
		require.Equal(t, "none", r.JSON["stage"])

		// An operator's PATCH (request writes as the administrator) keeps
		// the stage, skips ahead or goes back.
		r = request(t, http.MethodPatch, sys.URL("/api/ideas/jump"), map[string]any{"stage": "none"})
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "none", r.JSON["stage"], "the same stage is allowed")
		r = request(t, http.MethodPatch, sys.URL("/api/ideas/jump"), map[string]any{"stage": "implementing"})
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "implementing", r.JSON["stage"])
		require.Equal(t, "partial", r.JSON["manifestation_status"])
		r = request(t, http.MethodPatch, sys.URL("/api/ideas/jump"), map[string]any{"stage": "none"})
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "none", r.JSON["stage"])
		requireFieldError(t, request(t, http.MethodPatch, sys.URL("/api/ideas/jump"), map[string]any{"stage": "done"}), "stage")

		// The explicit endpoint moves anywhere too, an operator's alone.
		requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/ideas/jump/stage"), map[string]any{"stage": "complete"}, anonymous))
		requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/ideas/jump/stage"), map[string]any{"stage": "complete"}, ada.auth()))
		r = request(t, http.MethodPost, sys.URL("/api/ideas/jump/stage"), map[string]any{"stage": "complete"}, "X-API-Key: "+allinonetest.AdminKey)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "complete", r.JSON["stage"])
	})
}

// TestHardeningPortfolioProgressIsPaged: the progress dashboard lists at
// most limit idea ids per stage; the counts stay whole.
func TestHardeningPortfolioProgressIsPaged(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		for i := range 7 {
			createIdea(t, sys, map[string]any{"id": fmt.Sprintf("p%d", i), "name": fmt.Sprintf("P %d", i), "potential_value": 10 + i})
		}
		stage := func(r response) map[string]any {
			return r.JSON["by_stage"].(map[string]any)["none"].(map[string]any)
		}
		all := request(t, http.MethodGet, sys.URL("/api/ideas/progress"), nil)
		requireStatus(t, http.StatusOK, all)
		require.Equal(t, 7.0, stage(all)["count"])
		require.Len(t, stage(all)["idea_ids"], 7, "under the default limit of 100")

		page := request(t, http.MethodGet, sys.URL("/api/ideas/progress?limit=3&offset=2"), nil)
		requireStatus(t, http.StatusOK, page)
		require.Equal(t, 7.0, stage(page)["count"], "the count is the stage's full count")
		require.Equal(t, stage(all)["idea_ids"].([]any)[2:5], stage(page)["idea_ids"])
		require.Equal(t, 7.0, page.JSON["total_ideas"])
		for _, s := range []string{"specced", "complete"} {
			require.Equal(t, []any{}, page.JSON["by_stage"].(map[string]any)[s].(map[string]any)["idea_ids"], s)
		}
		for _, q := range []string{"limit=0", "limit=1001", "offset=-1", "limit=x"} {
			requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/ideas/progress?"+q), nil))
		}
	})
}

// TestHardeningPortfolioStorageHidesTheTarget: the storage report names
// the engine, schema and version to anyone, the connection target only to
// the administrator.
func TestHardeningPortfolioStorageHidesTheTarget(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		pub := request(t, http.MethodGet, sys.URL("/api/ideas/storage"), nil)
		requireStatus(t, http.StatusOK, pub)
		require.Equal(t, "", pub.JSON["database"])
		require.Equal(t, false, pub.JSON["targets_shown"])
		require.Equal(t, "portfolio", pub.JSON["schema"])
		require.GreaterOrEqual(t, pub.JSON["schema_version"], 1.0)
		require.NotContains(t, string(pub.Raw), sys.Storage.DataDir)
		// A credential that is sent must verify, also on a public read.
		wrong := request(t, http.MethodGet, sys.URL("/api/ideas/storage"), nil, "X-API-Key: wrong")
		requireStatus(t, http.StatusUnauthorized, wrong)
		require.Nil(t, wrong.JSON["database"], "a wrong key learns nothing of the target")
		require.NotContains(t, string(wrong.Raw), sys.Storage.DataDir)

		admin := request(t, http.MethodGet, sys.URL("/api/ideas/storage"), nil, "X-API-Key: "+allinonetest.AdminKey)
		requireStatus(t, http.StatusOK, admin)
		require.Equal(t, true, admin.JSON["targets_shown"])
		require.NotEmpty(t, admin.JSON["database"])
		require.NotContains(t, admin.JSON["database"], "password=", "redacted even for the administrator")
	})
}

// TestHardeningPortfolioRightSizingIsBounded: near-duplicate ideas give at
// most the configured number of suggestions, the most confident, and the
// count of all that were found.
func TestHardeningPortfolioRightSizingIsBounded(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		for i := range 12 {
			createIdea(t, sys, map[string]any{"id": fmt.Sprintf("dup%02d", i), "name": "Cache invoice totals in billing",
				"description": fmt.Sprintf("Keep invoice totals cached so billing pages load faster, copy %d", i)})
		}
		r := request(t, http.MethodGet, sys.URL("/api/ideas/right-sizing"), nil)
		requireStatus(t, http.StatusOK, r)
		require.Len(t, r.JSON["suggestions"], 5)
		health := r.JSON["health"].(map[string]any)
		require.Equal(t, 66.0, health["suggestion_count"], "12 ideas, every pair overlapping: 66 merges found")
		require.Equal(t, 12.0, health["overlap"])
	}, "-rightsizing-max-suggestions=5")
}
