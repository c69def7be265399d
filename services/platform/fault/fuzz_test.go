package fault_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// FuzzPage checks the list page rule: an absent limit is the default, a
// given one must be 1..max, the offset must not be negative; what passes
// is returned unchanged, and every refusal is a 422 naming exactly the
// offending fields.
func FuzzPage(f *testing.F) {
	f.Add(true, int32(0), int32(0), 50, 500)
	f.Add(false, int32(1), int32(0), 50, 500)
	f.Add(false, int32(500), int32(-1), 50, 500)
	f.Add(false, int32(501), int32(2147483647), 50, 500)
	f.Add(false, int32(-2147483648), int32(-2147483648), 20, 100)
	f.Fuzz(func(t *testing.T, absent bool, limit, offset int32, def, maxLimit int) {
		var lp *int32
		want := def
		if !absent {
			lp, want = &limit, int(limit)
		}
		l, o, err := fault.Page(lp, offset, def, maxLimit)
		badLimit, badOffset := want < 1 || want > maxLimit, offset < 0
		if !badLimit && !badOffset {
			require.NoError(t, err)
			require.Equal(t, want, l)
			require.Equal(t, int(offset), o)
			return
		}
		fe, ok := fault.As(err)
		require.True(t, ok, "a refused page is a fault.Error: %v", err)
		require.Equal(t, fault.Invalid, fe.Kind)
		var fields []string
		for _, x := range fe.Fields {
			fields = append(fields, x.Field)
		}
		var wantFields []string
		if badLimit {
			wantFields = append(wantFields, "limit")
		}
		if badOffset {
			wantFields = append(wantFields, "offset")
		}
		require.Equal(t, wantFields, fields)
		require.Zero(t, l)
		require.Zero(t, o)
	})
}
