package audit_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 123456789, time.UTC)

func entry(seq int64) audit.Entry {
	return audit.Entry{
		Seq: seq, Kind: "stake", At: t0.Add(time.Duration(seq) * time.Second), Actor: "ada", Subject: "ada",
		Amount: -1_500_000, Attrs: map[string]string{"idea_id": "i-1", "unit": "micro_cc"},
	}
}

func chain(n int) []audit.Record {
	out := make([]audit.Record, 0, n)
	prev := audit.Genesis
	for i := 1; i <= n; i++ {
		r := audit.Seal(prev, entry(int64(i)))
		out = append(out, r)
		prev = r.Hash
	}
	return out
}

func TestEncodingIsStable(t *testing.T) {
	t.Parallel()
	// The encoding is a contract: a chain written today must verify with
	// every later build. This pins the bytes of one entry.
	got := audit.Encode(entry(7))
	want := "FAE1\x017\x05stake\x1e2026-11-23T10:00:07.123456789Z\x03ada\x03ada\x08-1500000\x012" +
		"\x07idea_id\x03i-1\x04unit\x08micro_cc"
	require.Equal(t, want, string(got))
	// Cross-checked with an independent SHA-256 over 32 zero bytes and the bytes above.
	require.Equal(t, "01877ac2ccd67babff8710347008b79351afb41aaa5296586e82291c32759a4f", audit.Chain(audit.Genesis, entry(7)).String())
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, e := range []audit.Entry{
		entry(1),
		{Seq: 0, Kind: "", At: time.Unix(0, 0).UTC()},
		{Seq: 9, Kind: "freeze", At: t0.In(time.FixedZone("x", 3600)), Actor: "signer-1", Attrs: map[string]string{"reason": "héllo\n"}},
	} {
		b := audit.Encode(e)
		got, err := audit.Decode(b)
		require.NoError(t, err)
		require.True(t, got.At.Equal(e.At))
		require.Equal(t, time.UTC, got.At.Location())
		e.At = e.At.UTC()
		if len(e.Attrs) == 0 {
			e.Attrs = nil
		}
		require.Equal(t, e, got)
		require.Equal(t, b, audit.Encode(got))
	}
}

func TestDecodeRefusesNonCanonical(t *testing.T) {
	t.Parallel()
	good := string(audit.Encode(entry(7)))
	for name, b := range map[string]string{
		"magic":          "FAE2" + good[4:],
		"leading zero":   "FAE1\x0207" + good[6:],
		"trailing bytes": good + "x",
		"truncated":      good[:len(good)-3],
		"unsorted attrs": "FAE1\x017\x05stake\x1e2026-11-23T10:00:07.123456789Z\x03ada\x03ada\x08-1500000\x012" +
			"\x04unit\x08micro_cc\x07idea_id\x03i-1",
		"duplicate key": "FAE1\x017\x05stake\x1e2026-11-23T10:00:07.123456789Z\x03ada\x03ada\x08-1500000\x012" +
			"\x04unit\x01a\x04unit\x01b",
		"non-UTC time":       "FAE1\x017\x05stake\x192026-11-23T10:00:07+01:00\x03ada\x03ada\x08-1500000\x010",
		"non-minimal varint": "FAE1\x81\x007" + good[6:],
		"negative seq":       "FAE1\x02-7" + good[6:],
		"bad utf8":           "FAE1\x017\x01\xff" + good[13:],
	} {
		_, err := audit.Decode([]byte(b))
		require.ErrorIs(t, err, audit.ErrNotCanonical, name)
	}
}

func TestVerifyGoodChain(t *testing.T) {
	t.Parallel()
	res := audit.Verify(chain(50))
	require.Equal(t, audit.Result{OK: true, Checked: 50, LastVerified: 50}, res)
	require.Equal(t, audit.Result{OK: true}, audit.Verify(nil))
}

func TestVerifyFindsTheBreak(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		mutate func([]audit.Record)
		first  int64
	}{
		{"amount edited", func(rs []audit.Record) { rs[9].Entry.Amount++ }, 10},
		{"encoding edited", func(rs []audit.Record) { rs[19].Encoded[5] ^= 1 }, 20},
		{"hash edited", func(rs []audit.Record) { rs[29].Hash[0] ^= 1 }, 30},
		{"prev hash edited", func(rs []audit.Record) { rs[4].PrevHash[31] ^= 1 }, 5},
		{"attr added", func(rs []audit.Record) { rs[0].Entry.Attrs["x"] = "y" }, 1},
		{"entry re-sealed in place", func(rs []audit.Record) {
			e := rs[14].Entry
			e.Amount = 1
			rs[14] = audit.Seal(rs[14].PrevHash, e) // consistent by itself, breaks the next link
		}, 16},
	} {
		rs := chain(40)
		c.mutate(rs)
		res := audit.Verify(rs)
		require.False(t, res.OK, c.name)
		require.Equal(t, c.first, res.FirstDivergent, c.name)
		require.Equal(t, c.first-1, res.LastVerified, c.name)
		require.NotEmpty(t, res.Reason, c.name)
	}
}

func TestVerifyFindsAGap(t *testing.T) {
	t.Parallel()
	rs := chain(10)
	rs = append(rs[:4], rs[5:]...)
	res := audit.Verify(rs)
	require.Equal(t, int64(4), res.LastVerified)
	require.Equal(t, int64(6), res.FirstDivergent)
	require.Contains(t, res.Reason, "sequence gap")
}

func TestResumeAfterRepair(t *testing.T) {
	t.Parallel()
	rs := chain(10)
	rs[4].Entry.Amount = 42 // tampered
	found := audit.Verify(rs)
	require.Equal(t, int64(5), found.FirstDivergent)

	// Repair appends an entry that chains to the current head and names
	// the break; verification after it resumes from the repair entry.
	head := rs[len(rs)-1]
	repair := audit.Seal(head.Hash, audit.RepairEntry(11, t0, "admin", found))
	require.Equal(t, "4", repair.Entry.Attrs["last_verified"])
	require.Equal(t, "5", repair.Entry.Attrs["first_divergent"])
	next := audit.Seal(repair.Hash, entry(12))
	v := audit.Resume(repair.Entry.Seq, repair.Hash)
	require.True(t, v.Add(next))
	require.Equal(t, audit.Result{OK: true, Checked: 1, LastVerified: 12}, v.Result())
	require.Equal(t, next.Hash, v.Head())
}

func TestParseHash(t *testing.T) {
	t.Parallel()
	h := audit.Chain(audit.Genesis, entry(1))
	got, ok := audit.ParseHash(h.String())
	require.True(t, ok)
	require.Equal(t, h, got)
	for _, s := range []string{"", "zz", h.String()[:63], h.String() + "00"} {
		_, ok := audit.ParseHash(s)
		require.False(t, ok, s)
	}
	require.False(t, bytes.Equal(h[:], audit.Genesis[:]))
}
