package graph_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// FuzzParseID checks node and edge ids: only the 36-character UUID form is
// read, in any case, and what is returned is its canonical lowercase form,
// which reads back as itself.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{uuid.NewString(), strings.ToUpper(uuid.NewString()), "", "x",
		"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8", "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
		"6ba7b8109dad11d180b400c04fd430c8", "6ba7b810-9dad-11d1-80b4-00c04fd430cg", "６ba7b810-9dad-11d1-80b4-00c04fd430c8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, errs := graph.ParseID("node_id", s)
		if len(errs) > 0 {
			require.Empty(t, id)
			require.Equal(t, "node_id", errs[0].Field)
			return
		}
		require.Len(t, s, 36)
		require.Equal(t, strings.ToLower(s), id)
		again, errs := graph.ParseID("node_id", id)
		require.Empty(t, errs)
		require.Equal(t, id, again)
		opt, errs := graph.ParseOptionalID("from_node_id", s)
		require.Empty(t, errs)
		require.Equal(t, id, opt)
	})
}

// FuzzCheckText checks the graph's text rules: a type is non-blank valid
// UTF-8 of at most MaxTypeLen characters, an external id non-empty valid
// UTF-8 of at most MaxExternalIDLen, and a direction one of the three
// names, their short forms or empty (both).
func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"", " ", "idea", "out", "incoming", "Both", strings.Repeat("é", 64), strings.Repeat("é", 65),
		strings.Repeat("x", 257), "\xff", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typeOK := strings.TrimSpace(s) != "" && utf8.ValidString(s) && utf8.RuneCountInString(s) <= graph.MaxTypeLen
		require.Equal(t, typeOK, len(graph.CheckType("node_type", s)) == 0, "type %q", s)
		extOK := s != "" && utf8.ValidString(s) && utf8.RuneCountInString(s) <= graph.MaxExternalIDLen
		require.Equal(t, extOK, len(graph.CheckExternalID(s)) == 0, "external id %q", s)

		d, err := graph.ParseDirection(s)
		want := map[string]graph.Direction{"": graph.Both, "both": graph.Both, "outgoing": graph.Outgoing, "out": graph.Outgoing,
			"incoming": graph.Incoming, "in": graph.Incoming}
		if w, ok := want[s]; ok {
			require.NoError(t, err)
			require.Equal(t, w, d)
		} else {
			require.Equal(t, fault.Invalid, fault.KindOf(err))
		}
	})
}
