package handler

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// fields returns the fields of a 422, failing the test for anything else.
func fields(t *testing.T, err error) []string {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want a validation error, got %v", err)
	require.Equal(t, fault.Invalid, fe.Kind)
	var out []string
	for _, f := range fe.Fields {
		out = append(out, f.Field)
	}
	return out
}

// FuzzStringList checks the PATCH tags list (a JSON array) is read only
// when every item is a string, item for item; otherwise it is a 422 on
// tags.
func FuzzStringList(f *testing.F) {
	f.Add([]byte(`["a","b"]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`["a",1]`))
	f.Add([]byte(`[null,{"x":[]}]`))
	f.Add([]byte(`["\u0000","\ud83d\ude00"]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var l structpb.ListValue
		if err := l.UnmarshalJSON(body); err != nil {
			return
		}
		got, err := stringList(&l)
		allStrings := true
		for _, v := range l.AsSlice() {
			_, ok := v.(string)
			allStrings = allStrings && ok
		}
		if !allStrings {
			require.Equal(t, []string{"tags"}, fields(t, err))
			return
		}
		require.NoError(t, err)
		require.Len(t, got, len(l.GetValues()))
		for k, v := range l.AsSlice() {
			require.Equal(t, v, got[k])
		}
	})
}
