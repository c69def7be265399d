package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
