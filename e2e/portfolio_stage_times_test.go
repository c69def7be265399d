package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// stageTimes reads GET /api/ideas/stage-times with query and returns, per
// stage in the order answered, "stage:stints", checking on the way that
// the median and p90 are null exactly when there is no stint, and that a
// median never exceeds its p90.
func stageTimes(t *testing.T, sys *allinonetest.System, query string) (response, []string) {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/ideas/stage-times"+query), nil)
	requireStatus(t, http.StatusOK, r)
	var got []string
	for _, e := range r.JSON["stages"].([]any) {
		s := e.(map[string]any)
		got = append(got, fmt.Sprintf("%s:%v", s["stage"], s["stints"]))
		if s["stints"] == 0.0 {
			require.Nil(t, s["median_seconds"], "%s: %s", s["stage"], r.Raw)
			require.Nil(t, s["p90_seconds"], "%s: %s", s["stage"], r.Raw)
			continue
		}
		median, p90 := s["median_seconds"].(float64), s["p90_seconds"].(float64)
		require.GreaterOrEqual(t, median, 0.0, "%s", r.Raw)
		require.LessOrEqual(t, median, p90, "%s", r.Raw)
	}
	return r, got
}

// portfolioEdit stops sys, runs statements on its portfolio database (each
// must change the given number of rows) and starts it again.
func portfolioEdit(t *testing.T, sys *allinonetest.System, edits map[string]int64) {
	t.Helper()
	sys.Stop()
	cfg := database.Config{DataDir: sys.Storage.DataDir, Schema: "portfolio"}
	if sys.Storage.Engine == database.Postgres {
		cfg = database.Config{URL: sys.Storage.DatabaseURL, Schema: "portfolio"}
	}
	db, err := database.Open(context.Background(), cfg)
	require.NoError(t, err)
	for s, want := range edits {
		n, err := db.Exec(context.Background(), s)
		require.NoError(t, err, s)
		require.Equal(t, want, n, s)
	}
	db.Close()
	sys.Restart()
}

func TestStageTimes(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		advance := func(id string, times int) {
			for range times {
				requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/ideas/"+id+"/advance"), nil))
			}
		}

		before := time.Now()
		r, got := stageTimes(t, sys, "")
		after := time.Now()
		require.Equal(t, []string{"none:0", "specced:0", "implementing:0", "testing:0", "reviewing:0", "complete:0"}, got,
			"every stage, in pipeline order, before any idea moved")
		require.Equal(t, 90.0, r.JSON["days"], "the default window")
		since, err := time.Parse(time.RFC3339Nano, r.JSON["since"].(string))
		require.NoError(t, err)
		require.False(t, since.Before(before.Add(-90*24*time.Hour).Truncate(time.Second)), "since is the request's time less the window: %s", since)
		require.False(t, since.After(after.Add(-90*24*time.Hour)), "since is the request's time less the window: %s", since)

		createIdea(t, sys, map[string]any{"id": "old", "name": "Old"})
		advance("old", 2) // none and specced end
		createIdea(t, sys, map[string]any{"id": "fresh", "name": "Fresh"})
		advance("fresh", 3) // none, specced and implementing end
		createIdea(t, sys, map[string]any{"id": "young", "name": "Young"})
		advance("young", 1) // none ends
		createIdea(t, sys, map[string]any{"id": "legacy", "name": "Legacy"})
		// old's history moves two days back, stints and all; legacy's
		// creation becomes the change recorded when the history began, as
		// for an idea that predates it.
		portfolioEdit(t, sys, map[string]int64{
			`UPDATE stage_changes SET at = at - 172800000000 WHERE idea_id = 'old'`:             3,
			`UPDATE stage_changes SET reason = 'migrated', actor = '' WHERE idea_id = 'legacy'`: 1,
		})
		advance("legacy", 2) // none ends, unknown since when; specced ends

		r, got = stageTimes(t, sys, "?days=1")
		require.Equal(t, []string{"none:2", "specced:2", "implementing:1", "testing:0", "reviewing:0", "complete:0"}, got,
			"the last day: fresh's, young's and legacy's known stints; not old's, and not legacy's first")
		require.Equal(t, 1.0, r.JSON["days"])
		_, got = stageTimes(t, sys, "")
		require.Equal(t, []string{"none:3", "specced:3", "implementing:1", "testing:0", "reviewing:0", "complete:0"}, got,
			"90 days: old's stints too")

		changes := request(t, http.MethodGet, sys.URL("/api/ideas/legacy/stages"), nil)
		requireStatus(t, http.StatusOK, changes)
		require.Equal(t, "migrated", changes.JSON["changes"].([]any)[0].(map[string]any)["reason"], "the history legacy's stints follow")

		for _, q := range []string{"days=0", "days=366", "days=-1", "days=x"} {
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/ideas/stage-times?"+q), nil), "days")
		}
	})
}
