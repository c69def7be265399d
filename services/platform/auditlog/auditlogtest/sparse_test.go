package auditlogtest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/platform/auditlog/auditlogtest"
)

// TestSparseTreeIsTheTreeOfItsRecords: a small sparse tree hashes as the
// tree tlog builds record by record, and a large one proves its records
// and its prefixes.
func TestSparseTreeIsTheTreeOfItsRecords(t *testing.T) {
	t.Parallel()
	fill, odd := tlog.RecordHash([]byte("fill")), tlog.RecordHash([]byte("odd"))
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	})
	for n := int64(0); n < 37; n++ {
		leaf := fill
		if n == 21 {
			leaf = odd
		}
		hs, err := tlog.StoredHashesForRecordHash(n, leaf, reader)
		require.NoError(t, err)
		stored = append(stored, hs...)
		want, err := tlog.TreeHash(n+1, reader)
		require.NoError(t, err)
		got, err := auditlogtest.NewSparseTree(n+1, fill, map[int64]tlog.Hash{21: odd}).Root(n + 1)
		require.NoError(t, err)
		require.Equal(t, want, got, "size %d", n+1)
	}

	const size, seq, old = 1<<31 + 5, 1<<31 + 3, 1<<31 - 3
	s := auditlogtest.NewSparseTree(size, fill, map[int64]tlog.Hash{seq: odd})
	root, err := s.Root(size)
	require.NoError(t, err)
	p, err := tlog.ProveRecord(size, seq, s)
	require.NoError(t, err)
	require.NoError(t, tlog.CheckRecord(p, size, root, seq, odd))
	require.Error(t, tlog.CheckRecord(p, size, root, seq, fill))
	oldRoot, err := s.Root(old)
	require.NoError(t, err)
	c, err := tlog.ProveTree(size, old, s)
	require.NoError(t, err)
	require.NoError(t, tlog.CheckTree(c, size, root, old, oldRoot))
	require.NotEmpty(t, s.Read)
}
