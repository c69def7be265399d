package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
)

func TestIDsAt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc, path string
		want      []string
	}{
		{`{"id": "a", "name": "x"}`, "id", []string{"a"}},
		{`{"tasks": [{"id": "a"}, {"id": "b"}], "pagination": {}}`, "tasks.id", []string{"a", "b"}},
		{`{"tasks": []}`, "tasks.id", nil},
		{`{"task": {"id": "a"}}`, "task.id", []string{"a"}},
		{`{"task": null}`, "task.id", nil},
		{`{"entries": [{"seq": 12}, {"seq": 9007199254740993}]}`, "entries.seq", []string{"12", "9007199254740993"}},
		{`{"contributor_id": "c"}`, "id", nil},
		{`{"id": {"nested": true}}`, "id", nil},
	} {
		dec := json.NewDecoder(strings.NewReader(tc.doc))
		dec.UseNumber()
		var v any
		require.NoError(t, dec.Decode(&v))
		require.Equal(t, tc.want, idsAt(v, strings.Split(tc.path, ".")), "%s at %s", tc.path, tc.doc)
	}
}

func TestAPIPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/api/ideas": "/api/ideas", "api/ideas": "/api/ideas", "ideas": "/api/ideas", "/ideas?limit=1": "/api/ideas?limit=1",
		"/api": "/api", "//api/ready": "",
	} {
		got, err := apiPath(in)
		if want == "" {
			require.Error(t, err, in)
			continue
		}
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := apiPath("https://foundry.example.com/api/ideas")
	require.EqualError(t, err, `PATH "https://foundry.example.com/api/ideas": give the route (/api/ideas), not an address: --url says where Foundry is`)
}

func TestChoiceFlag(t *testing.T) {
	t.Parallel()
	var one string
	f := &choiceFlag{one: &one, words: []string{"a", "b"}}
	require.NoError(t, f.Set("b"))
	require.Equal(t, "b", one)
	require.EqualError(t, f.Set("c"), "must be one of a, b")
	require.Equal(t, "b", one, "a refused word changes nothing")

	var many []string
	m := &choiceFlag{many: &many, words: []string{"a", "b"}}
	require.NoError(t, m.Set("a"))
	require.NoError(t, m.Set("b"))
	require.Equal(t, []string{"a", "b"}, many)
	require.Equal(t, "[a,b]", m.String())
	require.Equal(t, "stringArray", m.Type())
}

// TestRenderMessageWrites64BitNumbers: an answer the CLI got over gRPC
// prints as the REST API answers it, its 64-bit integers as numbers (a
// total, an audit seq, a tree size), where protojson writes strings.
func TestRenderMessageWrites64BitNumbers(t *testing.T) {
	t.Parallel()
	b, err := renderMessage(&ledgerv1.GetAuditProofResponse{Seq: 1<<31 + 3, TreeSize: 1<<31 + 5, Proof: []string{}})
	require.NoError(t, err)
	require.JSONEq(t, `{"seq": 2147483651, "tree_size": 2147483653, "leaf_hash": "", "proof": [], "entry": null}`, string(b))
	b, err = renderMessage(&agentv1.ListTasksResponse{Pagination: &commonv1.Pagination{Limit: 50, Total: 2}})
	require.NoError(t, err)
	require.Contains(t, string(b), `"total":2,`)
}
