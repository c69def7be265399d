package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestDropCommaSpacesMatchesCompact checks the fast path against
// encoding/json's compaction on protojson-shaped input, in both spellings a
// binary may have (with and without the space after commas), including
// strings that hold commas, spaces, quotes and backslashes.
func TestDropCommaSpacesMatchesCompact(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{}`,
		`{"a":1, "b":[1, 2, 3], "c":{"d":null, "e":true}}`,
		`{"s":"x, y", "t":", ", "u":"\", \"", "v":"\\", "w":"a\\\", b"}`,
		`[", ", ",", " ,", "\\\\, "]`,
		`{"name":"idée, ünïcode, 日本", "n":-1.5e+10}`,
	} {
		var want bytes.Buffer
		require.NoError(t, json.Compact(&want, []byte(in)))
		require.Equal(t, want.String(), string(dropCommaSpaces([]byte(in))), in)
		// The unspaced spelling is compact already and passes unchanged.
		require.Equal(t, want.String(), string(dropCommaSpaces(want.Bytes())), in)
	}
}

// TestCompactOutputIsCompactJSON holds whichever way this test binary's
// protojson spells its output.
func TestCompactOutputIsCompactJSON(t *testing.T) {
	t.Parallel()
	msg, err := structpb.NewStruct(map[string]any{"a": "x, y", "b": []any{1, "z , ", nil}, "c": map[string]any{"d": true}})
	require.NoError(t, err)
	out, err := marshalJSON(msg)
	require.NoError(t, err)
	raw, err := protojson.Marshal(msg)
	require.NoError(t, err)
	var want bytes.Buffer
	require.NoError(t, json.Compact(&want, raw))
	require.Equal(t, want.String(), string(out))
}
