// Package auditlogtest builds Merkle trees of any size for tests: a log of
// billions of records whose hashes are computed when a proof asks for
// them, so that the proofs and the checks that must hold past 2^31 records
// are tested without writing 2^31 records.
package auditlogtest

import (
	"golang.org/x/mod/sumdb/tlog"
)

// SparseTree is the tree of Size records that are all one record (Fill's
// leaf hash) but those in Leaves, by position. A complete subtree of fill
// records hashes the same wherever it is, so a hash costs one lookup per
// level for each of Leaves' records below it. Read keeps every stored hash
// read through ReadHashes, by its tlog index: what a store must hold to
// answer the same proofs. Not safe for concurrent use.
type SparseTree struct {
	Size   int64
	Leaves map[int64]tlog.Hash
	Read   map[int64]tlog.Hash

	// uniform[l] is the hash of a complete subtree of 2^l fill records.
	uniform [64]tlog.Hash
}

// NewSparseTree returns the tree of size records of leaf hash fill, but
// leaves.
func NewSparseTree(size int64, fill tlog.Hash, leaves map[int64]tlog.Hash) *SparseTree {
	s := &SparseTree{Size: size, Leaves: leaves, Read: map[int64]tlog.Hash{}}
	s.uniform[0] = fill
	for l := 1; l < len(s.uniform); l++ {
		s.uniform[l] = tlog.NodeHash(s.uniform[l-1], s.uniform[l-1])
	}
	return s
}

// hash is the hash of the complete subtree k at level (records
// k·2^level to (k+1)·2^level-1).
func (s *SparseTree) hash(level int, k int64) tlog.Hash {
	lo, hi := k<<level, (k+1)<<level
	for p := range s.Leaves {
		if p >= lo && p < hi {
			if level == 0 {
				return s.Leaves[p]
			}
			return tlog.NodeHash(s.hash(level-1, 2*k), s.hash(level-1, 2*k+1))
		}
	}
	return s.uniform[level]
}

// ReadHashes implements tlog.HashReader.
func (s *SparseTree) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		level, k := tlog.SplitStoredHashIndex(x)
		out[i] = s.hash(level, k)
		s.Read[x] = out[i]
	}
	return out, nil
}

// Root is the tree hash of the first n records.
func (s *SparseTree) Root(n int64) (tlog.Hash, error) { return tlog.TreeHash(n, s) }
