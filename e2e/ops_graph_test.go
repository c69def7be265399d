package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

func upsertNode(t *testing.T, sys *allinonetest.System, body any) response {
	t.Helper()
	return request(t, http.MethodPost, sys.URL("/api/graph/nodes"), body)
}

func createEdge(t *testing.T, sys *allinonetest.System, body any) response {
	t.Helper()
	return request(t, http.MethodPost, sys.URL("/api/graph/edges"), body)
}

// mustNode creates a node and returns its id.
func mustNode(t *testing.T, sys *allinonetest.System, nodeType, externalID string) string {
	t.Helper()
	r := upsertNode(t, sys, map[string]any{"node_type": nodeType, "external_id": externalID, "payload": map[string]any{"name": externalID}})
	require.Contains(t, []int{http.StatusCreated, http.StatusOK}, r.Status, "body: %s", r.Raw)
	return r.JSON["id"].(string)
}

// mustEdge links two nodes and returns the edge's id.
func mustEdge(t *testing.T, sys *allinonetest.System, edgeType, from, to string) string {
	t.Helper()
	r := createEdge(t, sys, map[string]any{"edge_type": edgeType, "from_node_id": from, "to_node_id": to})
	requireStatus(t, http.StatusCreated, r)
	return r.JSON["id"].(string)
}

// edgeIDs returns the ids of a page of edges ({edges, pagination}), in
// order.
func edgeIDs(t *testing.T, r response) []string {
	t.Helper()
	listPage(t, r, "edges")
	return idsOf(t, r.JSON["edges"])
}

// edgePage is the pagination of a page of edges.
func edgePage(t *testing.T, r response) map[string]any {
	t.Helper()
	_, page := listPage(t, r, "edges")
	return page
}

// idsOf returns the ids of a JSON list of edges.
func idsOf(t *testing.T, list any) []string {
	t.Helper()
	edges, ok := list.([]any)
	require.True(t, ok, "a list of edges: %v", list)
	ids := []string{}
	for _, e := range edges {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	return ids
}

func TestGraph(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		t.Run("upsert is idempotent by (node_type, external_id)", func(t *testing.T) {
			first := upsertNode(t, sys, map[string]any{"node_type": "repo", "external_id": "github:foundry", "payload": map[string]any{"stars": 1}})
			requireStatus(t, http.StatusCreated, first)
			id, _ := first.JSON["id"].(string)
			require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, id)
			require.Equal(t, "repo", first.JSON["node_type"])
			require.Equal(t, "github:foundry", first.JSON["external_id"])
			require.Equal(t, map[string]any{"stars": 1.0}, first.JSON["payload"])
			require.NotContains(t, first.JSON, "created", "the created flag is not part of the body")

			again := upsertNode(t, sys, map[string]any{"node_type": "repo", "external_id": "github:foundry", "payload": map[string]any{"stars": 2}})
			requireStatus(t, http.StatusOK, again)
			require.Equal(t, id, again.JSON["id"], "the same pair twice returns the same id")
			require.Equal(t, map[string]any{"stars": 2.0}, again.JSON["payload"])
			require.Equal(t, first.JSON["created_at"], again.JSON["created_at"])

			a := upsertNode(t, sys, map[string]any{"node_type": "note", "payload": map[string]any{}})
			b := upsertNode(t, sys, map[string]any{"node_type": "note", "payload": map[string]any{}})
			requireStatus(t, http.StatusCreated, a)
			requireStatus(t, http.StatusCreated, b)
			require.NotEqual(t, a.JSON["id"], b.JSON["id"], "without an external id every upsert creates")
			require.Nil(t, a.JSON["external_id"])
		})

		t.Run("20 concurrent identical upserts make one node", func(t *testing.T) {
			const racers = 20
			statuses := make([]int, racers)
			ids := make([]any, racers)
			var wg sync.WaitGroup
			for i := range racers {
				wg.Go(func() {
					r := upsertNode(t, sys, map[string]any{"node_type": "task", "external_id": "race-1", "payload": map[string]any{"i": 1}})
					statuses[i], ids[i] = r.Status, r.JSON["id"]
				})
			}
			wg.Wait()
			created := 0
			for i := range racers {
				require.Contains(t, []int{http.StatusCreated, http.StatusOK}, statuses[i])
				require.Equal(t, ids[0], ids[i], "one node")
				if statuses[i] == http.StatusCreated {
					created++
				}
			}
			require.Equal(t, 1, created, "exactly one 201")
		})

		t.Run("validation", func(t *testing.T) {
			valid := map[string]any{"k": "v"}
			for name, body := range map[string]any{
				"no payload":           map[string]any{"node_type": "t"},
				"null payload":         map[string]any{"node_type": "t", "payload": nil},
				"payload not object":   map[string]any{"node_type": "t", "payload": "text"},
				"payload a list":       map[string]any{"node_type": "t", "payload": []any{1}},
				"no node_type":         map[string]any{"payload": valid},
				"node_type too long":   map[string]any{"node_type": strings.Repeat("n", 65), "payload": valid},
				"external_id too long": map[string]any{"node_type": "t", "external_id": strings.Repeat("x", 257), "payload": valid},
				"unknown field":        map[string]any{"node_type": "t", "payload": valid, "color": "red"},
				"malformed JSON":       `{"node_type": `,
			} {
				r := upsertNode(t, sys, body)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", name, r.Raw)
				requireStatus(t, http.StatusUnprocessableEntity, r)
			}
			requireStatus(t, http.StatusCreated, upsertNode(t, sys, map[string]any{
				"node_type": strings.Repeat("n", 64), "external_id": strings.Repeat("x", 256), "payload": valid,
			}))
			requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/graph/nodes/not-a-uuid"), nil))
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/graph/nodes/"+uuid.NewString()), nil))
		})

		t.Run("edges: create, 404 for unknown endpoints, traversal both ways", func(t *testing.T) {
			idea := mustNode(t, sys, "idea", "idea-t")
			asset := mustNode(t, sys, "asset", "asset-t")
			person := mustNode(t, sys, "person", "person-t")

			r := createEdge(t, sys, map[string]any{"edge_type": "produces", "from_node_id": idea, "to_node_id": asset, "weight": 0.5, "payload": map[string]any{"why": "test"}})
			requireStatus(t, http.StatusCreated, r)
			produces := r.JSON["id"].(string)
			require.Equal(t, 0.5, r.JSON["weight"])
			require.Equal(t, map[string]any{"why": "test"}, r.JSON["payload"])
			owns := mustEdge(t, sys, "owns", person, idea)
			funds := mustEdge(t, sys, "funds", person, asset)

			missing := uuid.NewString()
			r = createEdge(t, sys, map[string]any{"edge_type": "owns", "from_node_id": missing, "to_node_id": idea})
			requireStatus(t, http.StatusNotFound, r)
			require.Equal(t, "from_node_id: node "+missing+" not found", r.JSON["detail"])
			r = createEdge(t, sys, map[string]any{"edge_type": "owns", "from_node_id": idea, "to_node_id": missing})
			requireStatus(t, http.StatusNotFound, r)
			require.Contains(t, r.JSON["detail"], "to_node_id")
			requireStatus(t, http.StatusUnprocessableEntity, createEdge(t, sys, map[string]any{"edge_type": "owns", "from_node_id": "x", "to_node_id": idea}))
			requireStatus(t, http.StatusUnprocessableEntity, createEdge(t, sys, map[string]any{"from_node_id": idea, "to_node_id": asset}))

			n := request(t, http.MethodGet, sys.URL("/api/graph/nodes/"+idea), nil)
			requireStatus(t, http.StatusOK, n)
			require.Equal(t, idea, n.JSON["id"])
			require.Equal(t, "idea-t", n.JSON["external_id"])
			require.Equal(t, []string{produces}, idsOf(t, n.JSON["outgoing_edges"]))
			require.Equal(t, 1.0, n.JSON["outgoing_edge_count"])

			for _, tc := range []struct {
				query string
				want  []string
			}{
				{"direction=outgoing", []string{produces}},
				{"direction=incoming", []string{owns}},
				{"direction=both", []string{produces, owns}},
				{"", []string{produces, owns}},
				{"direction=both&edge_type=owns", []string{owns}},
				{"direction=out", []string{produces}},
			} {
				r := request(t, http.MethodGet, sys.URL("/api/graph/nodes/"+idea+"/edges?"+tc.query), nil)
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, tc.want, edgeIDs(t, r), tc.query)
				require.Equal(t, wantPage(50, 0, len(tc.want), false), edgePage(t, r), tc.query)
			}
			r = request(t, http.MethodGet, sys.URL("/api/graph/nodes/"+asset+"/edges?direction=incoming"), nil)
			require.Equal(t, []string{produces, funds}, edgeIDs(t, r))
			requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/graph/nodes/"+idea+"/edges?direction=sideways"), nil))
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/graph/nodes/"+missing+"/edges"), nil))

			r = request(t, http.MethodGet, sys.URL("/api/graph/edges?edge_type=funds&from_node_id="+person), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, []string{funds}, edgeIDs(t, r))
			r = request(t, http.MethodGet, sys.URL("/api/graph/edges?edge_type=produces&to_node_id="+asset), nil)
			require.Equal(t, []string{produces}, edgeIDs(t, r))
		})

		t.Run("edge lists are paginated", func(t *testing.T) {
			hub := mustNode(t, sys, "hub", "hub-p")
			var want []string
			for i := range 7 {
				leaf := mustNode(t, sys, "leaf", fmt.Sprintf("leaf-%d", i))
				want = append(want, mustEdge(t, sys, "spoke", hub, leaf))
			}
			var got []string
			for offset := 0; offset < 9; offset += 3 {
				r := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/graph/edges?edge_type=spoke&from_node_id=%s&limit=3&offset=%d", hub, offset)), nil)
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, wantPage(3, offset, 7, offset+3 < 7), edgePage(t, r))
				got = append(got, edgeIDs(t, r)...)
			}
			require.ElementsMatch(t, want, got, "the pages hold every edge once")
			require.Len(t, got, 7)

			r := request(t, http.MethodGet, sys.URL("/api/graph/nodes/"+hub+"/edges?direction=outgoing&limit=5&offset=5"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, got[5:], edgeIDs(t, r), "the same stable order on both lists")
			require.Equal(t, wantPage(5, 5, 7, false), edgePage(t, r))

			r = request(t, http.MethodGet, sys.URL("/api/graph/edges?edge_type=spoke"), nil)
			require.Equal(t, wantPage(50, 0, 7, false), edgePage(t, r), "the default page size")
			for _, q := range []string{"limit=0", "limit=501", "offset=-1", "limit=abc", "from_node_id=nope"} {
				requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/graph/edges?"+q), nil))
			}
		})
	})
}
