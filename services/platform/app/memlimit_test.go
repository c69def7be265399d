package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		gomemlimit, container string
		want                  int64
		err                   bool
	}{
		{"", "", 0, false},
		{"", "268435456", 241591910, false}, // 256 MiB: 90 %, rounded down
		{"", " 1000 ", 900, false},
		{"200MiB", "268435456", 0, false}, // the operator's own value wins (the runtime applied it)
		{"", "256Mi", 0, true},
		{"", "0", 0, true},
		{"", "-5", 0, true},
	} {
		got, err := memoryLimit(tc.gomemlimit, tc.container)
		if tc.err {
			require.Error(t, err, "%q %q", tc.gomemlimit, tc.container)
			require.Contains(t, err.Error(), "FOUNDRY_MEMORY_LIMIT")
			continue
		}
		require.NoError(t, err, "%q %q", tc.gomemlimit, tc.container)
		require.Equal(t, tc.want, got, "%q %q", tc.gomemlimit, tc.container)
	}
}

// TestGCPercent: a process sets the collector's target to 200 unless the
// operator set GOGC (any value: the runtime read it already).
func TestGCPercent(t *testing.T) {
	for gogc, want := range map[string]int{"": 200, "  ": 200, "100": 0, "off": 0, "50": 0} {
		require.Equal(t, want, gcPercentFor(gogc), "GOGC=%q", gogc)
	}
}
