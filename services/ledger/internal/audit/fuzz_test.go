package audit_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
)

// FuzzVerify checks the chain verifier never panics, accepts an untouched
// chain, and catches any single-byte change to any stored record, naming
// the record it was made in (or the one after, when the change left the
// record consistent with itself).
func FuzzVerify(f *testing.F) {
	f.Add(uint8(5), uint16(0), uint8(1))
	f.Add(uint8(1), uint16(40), uint8(0x80))
	f.Add(uint8(20), uint16(999), uint8(7))
	f.Fuzz(func(t *testing.T, n uint8, pos uint16, flip uint8) {
		size := int(n%32) + 1
		rs := chain(size)
		require.True(t, audit.Verify(rs).OK)
		if flip == 0 {
			return
		}
		// Pick a record and a byte among its encoding and hashes.
		idx := int(pos) % size
		r := &rs[idx]
		total := len(r.Encoded) + 2*len(r.Hash)
		at := int(pos) % total
		switch {
		case at < len(r.Encoded):
			r.Encoded[at] ^= flip
		case at < len(r.Encoded)+len(r.Hash):
			r.PrevHash[at-len(r.Encoded)] ^= flip
		default:
			r.Hash[at-len(r.Encoded)-len(r.Hash)] ^= flip
		}
		res := audit.Verify(rs)
		require.False(t, res.OK)
		require.Equal(t, int64(idx+1), res.FirstDivergent)
		require.Equal(t, int64(idx), res.LastVerified)
	})
}

// FuzzRepair checks that a repair accepts exactly the break it records:
// after any single-byte change to a stored record and one repair, the
// chain verifies again (the break reported as repaired); any second change,
// anywhere, is found.
func FuzzRepair(f *testing.F) {
	f.Add(uint8(5), uint16(0), uint8(1), uint16(3), uint8(2))
	f.Add(uint8(1), uint16(40), uint8(0x80), uint16(0), uint8(1))
	f.Add(uint8(20), uint16(999), uint8(7), uint16(12345), uint8(0xff))
	f.Fuzz(func(t *testing.T, n uint8, pos uint16, flip uint8, pos2 uint16, flip2 uint8) {
		if flip == 0 || flip2 == 0 {
			return
		}
		size := int(n%32) + 1
		rs := chain(size)
		head := rs[size-1]
		at := flipByte(rs, int(pos), flip)
		rs = repair(t, rs, head)
		last := rs[len(rs)-1].Entry.Seq
		res, _ := walk(rs, last)
		require.True(t, res.OK, "%+v", res)
		require.Len(t, res.Repaired, 1)

		again := clone(rs)
		if at2 := flipByte(again, int(pos2), flip2); at2 == at && flip2 == flip {
			return // the first change undone: nothing is broken
		}
		res, _ = walk(again, last)
		require.False(t, res.OK, "a second change is found")
	})
}

// flipByte changes one byte among the encodings and hashes of rs, chosen
// by pos, and says which.
func flipByte(rs []audit.Record, pos int, flip uint8) [2]int {
	idx := pos % len(rs)
	r := &rs[idx]
	r.Encoded = bytes.Clone(r.Encoded)
	total := len(r.Encoded) + 2*len(r.Hash)
	at := pos % total
	switch {
	case at < len(r.Encoded):
		r.Encoded[at] ^= flip
	case at < len(r.Encoded)+len(r.Hash):
		r.PrevHash[at-len(r.Encoded)] ^= flip
	default:
		r.Hash[at-len(r.Encoded)-len(r.Hash)] ^= flip
	}
	return [2]int{idx, at}
}

// FuzzParseHash checks a stored hash is read back only from exactly 64 hex
// digits, and that what is read prints back as the same digits (in
// lowercase, the stored form).
func FuzzParseHash(f *testing.F) {
	f.Add(audit.Chain(audit.Genesis, entry(1)).String())
	f.Add(strings.ToUpper(audit.Chain(audit.Genesis, entry(1)).String()))
	f.Add(audit.Genesis.String())
	f.Add("")
	f.Add(strings.Repeat("g", 64))
	f.Add(strings.Repeat("0", 63))
	f.Add(strings.Repeat("0", 65))
	f.Add(strings.Repeat("é", 32))
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := audit.ParseHash(s)
		raw, err := hex.DecodeString(s)
		if err != nil || len(raw) != len(h) {
			require.False(t, ok, "%q is no hash", s)
			return
		}
		require.True(t, ok, "%q is a hash", s)
		require.Equal(t, raw, h[:])
		require.Equal(t, strings.ToLower(s), h.String())
	})
}
