package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// TestEveryBodyRouteRejectsBadBodies sends malformed bodies to every route
// that reads a JSON body: each must answer 422 (413 for an oversized body)
// with a detail, never a 5xx, and write nothing.
func TestEveryBodyRouteRejectsBadBodies(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	createIdea(t, sys, map[string]any{"id": "target", "name": "Target"})

	routes := []struct {
		method, path string
		// field is a field of the request whose JSON type is not an object.
		field string
	}{
		{http.MethodPost, "/api/onboarding/register", "handle"},
		{http.MethodPost, "/api/ideas", "name"},
		{http.MethodPatch, "/api/ideas/target", "name"},
		{http.MethodPost, "/api/ideas/target/stage", "stage"},
		{http.MethodPut, "/api/ideas/target/tags", "tags"},
		{http.MethodPost, "/api/ideas/target/questions", "question"},
		{http.MethodPost, "/api/ideas/right-sizing/apply", "suggestion_type"},
		{http.MethodPost, "/api/assets", "type"},
		{http.MethodPost, "/api/contributions", "cost_amount"},
		{http.MethodPost, "/api/distributions", "value_amount"},
		{http.MethodPost, "/api/graph/nodes", "node_type"},
		{http.MethodPost, "/api/graph/edges", "edge_type"},
		{http.MethodPost, "/api/automation/usage/snapshots", "provider"},
	}
	before := request(t, http.MethodGet, sys.URL("/api/ideas/target"), nil)
	for _, rt := range routes {
		bodies := map[string]string{
			"invalid JSON":     `{"` + rt.field + `":`,
			"a JSON array":     `[{"` + rt.field + `":"x"}]`,
			"a JSON string":    `"x"`,
			"a wrong type":     `{"` + rt.field + `":{"nested":true}}`,
			"an unknown field": `{"not_a_field":1}`,
		}
		for name, body := range bodies {
			r := request(t, rt.method, sys.URL(rt.path), body, adminHeader)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s %s with %s: %s", rt.method, rt.path, name, r.Raw)
			requireStatus(t, http.StatusUnprocessableEntity, r)
		}
		big := `{"` + rt.field + `":"` + strings.Repeat("x", 2<<20) + `"}`
		r := request(t, rt.method, sys.URL(rt.path), big, adminHeader)
		require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, "%s %s with 2 MiB", rt.method, rt.path)
		requireStatus(t, http.StatusRequestEntityTooLarge, r)
	}
	after := request(t, http.MethodGet, sys.URL("/api/ideas/target"), nil)
	require.Equal(t, string(before.Raw), string(after.Raw), "no refused request changed the idea")
	list := request(t, http.MethodGet, sys.URL("/api/ideas"), nil)
	require.Equal(t, []string{"target"}, ideaIDs(list.JSON), "no refused request created an idea")
}
