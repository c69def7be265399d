package audit

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"
)

// hashStore is tlog's stored hashes in memory.
type hashStore map[int64]tlog.Hash

func (s hashStore) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		h, ok := s[x]
		if !ok {
			return nil, errors.New("missing stored hash " + strconv.FormatInt(x, 10))
		}
		out[i] = h
	}
	return out, nil
}

// TestFrontierIsTlog grows a tree one record at a time with a Frontier,
// reloaded from the stored hashes at every size, and checks that it stores
// exactly what tlog.StoredHashes does and has tlog.TreeHash's root.
func TestFrontierIsTlog(t *testing.T) {
	t.Parallel()
	stored := hashStore{}
	var f Frontier
	require.Equal(t, tlog.Hash{}, f.Root())
	for n := int64(0); n < 300; n++ {
		loaded, err := LoadFrontier(n, stored)
		require.NoError(t, err)
		require.Equal(t, f.Root(), loaded.Root(), "size %d", n)
		data := []byte("record " + strconv.FormatInt(n, 10))
		want, err := tlog.StoredHashes(n, data, stored)
		require.NoError(t, err)
		got := loaded.Append(tlog.Hash(LeafHash(data)))
		require.Equal(t, want, got, "record %d", n)
		require.Equal(t, f.Append(tlog.Hash(LeafHash(data))), got)
		for i, h := range got {
			stored[tlog.StoredHashIndex(0, n)+int64(i)] = h
		}
		root, err := tlog.TreeHash(n+1, stored)
		require.NoError(t, err)
		require.Equal(t, root, f.Root(), "size %d", n+1)
		require.Equal(t, n+1, f.Size())
	}
}

// TestCheckpointSignedNote signs a checkpoint, opens it with the verifier
// key, and refuses it under another key, altered, or with a wrong origin.
func TestCheckpointSignedNote(t *testing.T) {
	t.Parallel()
	skey, vkey, err := GenerateKey("foundry-audit")
	require.NoError(t, err)
	s, err := NewSigner(skey)
	require.NoError(t, err)
	require.Equal(t, vkey, s.VerifierKey(), "the verifier key is derived from the signing key")
	require.Equal(t, "foundry-audit", s.Origin())

	c := Checkpoint{Origin: s.Origin(), Size: 42, Root: tlog.RecordHash([]byte("x"))}
	signed, err := s.Sign(c)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(signed, "foundry-audit\n42\n"+strings.Split(c.Text(), "\n")[2]+"\n\n— foundry-audit "), signed)
	got, by, err := OpenCheckpoint(signed, vkey)
	require.NoError(t, err)
	require.Equal(t, c, got)
	require.Equal(t, vkey, by)

	_, otherV, err := GenerateKey("foundry-audit")
	require.NoError(t, err)
	_, _, err = OpenCheckpoint(signed, otherV)
	require.ErrorIs(t, err, ErrOtherKey)
	_, by, err = OpenCheckpoint(signed, otherV, vkey)
	require.NoError(t, err, "any of the keys given")
	require.Equal(t, vkey, by, "the key that verified it")

	_, _, err = OpenCheckpoint(strings.Replace(signed, "\n42\n", "\n43\n", 1), vkey)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrOtherKey)

	bad, err := s.Sign(Checkpoint{Origin: "elsewhere", Size: 1})
	require.NoError(t, err)
	_, _, err = OpenCheckpoint(bad, vkey)
	require.ErrorContains(t, err, "origin")

	_, err = NewSigner("not a key")
	require.ErrorContains(t, err, "not an Ed25519 note signing key")
}

// TestParseCheckpoint reads what Text writes and refuses malformed bodies.
func TestParseCheckpoint(t *testing.T) {
	t.Parallel()
	c := Checkpoint{Origin: "o", Size: 7, Root: tlog.RecordHash([]byte("y"))}
	got, err := ParseCheckpoint(c.Text() + "extension line\n")
	require.NoError(t, err)
	require.Equal(t, c, got)
	for _, bad := range []string{"", "o\n7\n", "o\n07\n" + strings.Split(c.Text(), "\n")[2] + "\n", "o\n7\nAAAA\n", "\n7\n" + strings.Split(c.Text(), "\n")[2] + "\n", strings.TrimSuffix(c.Text(), "\n")} {
		_, err := ParseCheckpoint(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestFrontierText(t *testing.T) {
	t.Parallel()
	f := &Frontier{}
	for n := int64(0); n < 70; n++ {
		g, err := ParseFrontier(f.String())
		require.NoError(t, err, "size %d", n)
		require.Equal(t, f.Root(), g.Root())
		require.Equal(t, f.Size(), g.Size())
		leaf := tlog.Hash(LeafHash([]byte(strconv.FormatInt(n, 10))))
		require.Equal(t, f.Append(leaf), g.Append(leaf), "a parsed frontier grows as the original")
	}
	for _, bad := range []string{"", "x", "-1", "3 0:00", "3", "2 0:" + Genesis.String(), "1 0:" + Genesis.String() + " 0:" + Genesis.String()} {
		_, err := ParseFrontier(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestSignerMAC(t *testing.T) {
	t.Parallel()
	skey, _, err := GenerateKey("ledger")
	require.NoError(t, err)
	s, err := NewSigner(skey)
	require.NoError(t, err)
	again, err := NewSigner(skey)
	require.NoError(t, err)
	require.Equal(t, s.MAC([]byte("state")), again.MAC([]byte("state")), "the key's, not the process's")
	require.NotEqual(t, s.MAC([]byte("state")), s.MAC([]byte("state!")))
	other, _, err := GenerateKey("ledger")
	require.NoError(t, err)
	o, err := NewSigner(other)
	require.NoError(t, err)
	require.NotEqual(t, s.MAC([]byte("state")), o.MAC([]byte("state")))
	require.NotEqual(t, s.KeyID(), o.KeyID())
	require.Regexp(t, `^[0-9a-f]{8}$`, s.KeyID())
}
