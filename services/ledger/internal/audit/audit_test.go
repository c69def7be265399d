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
	require.Equal(t, int64(5), res.FirstDivergent, "the seq that is missing, not the next one present")
	require.Equal(t, "sequence gap: expected seq 5, found seq 6", res.Reason)
}

// walk verifies records knowing the repairs among them, up to head.
func walk(records []audit.Record, head int64) (audit.Result, *audit.Verifier) {
	var breaks []audit.Break
	for _, r := range records {
		if b, ok := audit.ParseRepair(r); ok && r.Entry.Seq <= head {
			breaks = append(breaks, b)
		}
	}
	v := audit.NewVerifier(breaks)
	for _, r := range records {
		if r.Entry.Seq > head || !v.Add(r) {
			break
		}
	}
	return v.Finish(head), v
}

// repair does what the repair use case does: walk, plan the break from the
// divergence, append the repair entry after the head.
func repair(t *testing.T, records []audit.Record, head audit.Record) []audit.Record {
	t.Helper()
	found, v := walk(records, head.Entry.Seq)
	require.False(t, found.OK, "nothing to repair")
	d, ok := v.Divergence()
	require.True(t, ok)
	nextPrev := head.Hash
	if d.Found != nil {
		for _, r := range records {
			if r.Entry.Seq > d.Found.Entry.Seq && r.Entry.Seq <= head.Entry.Seq {
				nextPrev = r.PrevHash
				break
			}
		}
	}
	b := audit.PlanBreak(d, nextPrev, head.Entry.Seq, head.Hash)
	rep := audit.Seal(head.Hash, audit.RepairEntry(head.Entry.Seq+1, t0, "admin", found, b))
	return append(records, rep)
}

// grow appends n entries after the last record.
func grow(records []audit.Record, n int) []audit.Record {
	last := records[len(records)-1]
	for range n {
		r := audit.Seal(last.Hash, entry(last.Entry.Seq+1))
		records, last = append(records, r), r
	}
	return records
}

// TestRepairAcceptsOnlyTheRecordedBreak: after a repair, verification still
// walks the whole chain; the break the repair recorded is accepted and
// reported, and any other change, before or after it, is found.
func TestRepairAcceptsOnlyTheRecordedBreak(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		mutate func([]audit.Record) []audit.Record
		from   int64
		to     int64
	}{
		{"amount edited", func(rs []audit.Record) []audit.Record { rs[2].Entry.Amount = 1; return rs }, 3, 3},
		{"subject edited", func(rs []audit.Record) []audit.Record { rs[2].Entry.Subject = "eve"; return rs }, 3, 3},
		{"encoding edited", func(rs []audit.Record) []audit.Record { rs[2].Encoded[5] ^= 1; return rs }, 3, 3},
		{"hash edited", func(rs []audit.Record) []audit.Record { rs[2].Hash[0] ^= 1; return rs }, 3, 3},
		{"prev hash edited", func(rs []audit.Record) []audit.Record { rs[2].PrevHash[0] ^= 1; return rs }, 3, 3},
		{"re-sealed in place", func(rs []audit.Record) []audit.Record {
			e := rs[2].Entry
			e.Amount = 1
			rs[2] = audit.Seal(rs[2].PrevHash, e)
			return rs
		}, 4, 4},
		{"entries deleted", func(rs []audit.Record) []audit.Record { return append(rs[:2:2], rs[4:]...) }, 3, 4},
		{"tail cut off", func(rs []audit.Record) []audit.Record { return rs[:8] }, 9, 10},
		{"last entry edited", func(rs []audit.Record) []audit.Record { rs[9].Entry.Actor = "eve"; return rs }, 10, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := chain(10)
			head := rs[9]
			rs = c.mutate(rs)
			rs = repair(t, rs, head)
			rs = grow(rs, 3)
			last := rs[len(rs)-1].Entry.Seq
			res, _ := walk(rs, last)
			require.True(t, res.OK, "%+v", res)
			require.Equal(t, last, res.LastVerified)
			require.Len(t, res.Repaired, 1)
			b := res.Repaired[0]
			require.Equal(t, []int64{11, c.from, c.to}, []int64{b.RepairSeq, b.From, b.To})
			require.False(t, b.Legacy)
			require.NotEmpty(t, b.Reason)

			// Anything else changed, before the break, after it, in it or
			// in the repair entry, is found.
			for name, later := range map[string]func([]audit.Record){
				"before":           func(rs []audit.Record) { rs[0].Entry.Amount = 7 },
				"after the repair": func(rs []audit.Record) { rs[len(rs)-1].Entry.Subject = "eve" },
				"the repair entry": func(rs []audit.Record) { rs[len(rs)-4].Entry.Attrs["repaired_to"] = "12" },
			} {
				again := clone(rs)
				later(again)
				res, _ := walk(again, last)
				require.False(t, res.OK, name)
			}
			if c.from == c.to && c.name != "tail cut off" {
				again := clone(rs)
				for i := range again {
					if again[i].Entry.Seq == c.from {
						again[i].Entry.Kind = "edited again"
					}
				}
				res, _ := walk(again, last)
				require.False(t, res.OK, "the repaired row edited again")
				require.Equal(t, c.from, res.FirstDivergent)
				require.Contains(t, res.Reason, "changed after the repair")
			}
		})
	}
}

func clone(rs []audit.Record) []audit.Record {
	out := make([]audit.Record, len(rs))
	for i, r := range rs {
		r.Encoded = bytes.Clone(r.Encoded)
		attrs := make(map[string]string, len(r.Entry.Attrs))
		for k, v := range r.Entry.Attrs {
			attrs[k] = v
		}
		r.Entry.Attrs = attrs
		out[i] = r
	}
	return out
}

// TestRepairsOneBreakAtATime: two edited rows need two repairs; after the
// first, the second is still reported.
func TestRepairsOneBreakAtATime(t *testing.T) {
	t.Parallel()
	rs := chain(10)
	head := rs[9]
	rs[0].Entry.Amount = 1
	rs[3].Entry.Subject = "eve"
	rs = repair(t, rs, head)
	res, _ := walk(rs, 11)
	require.False(t, res.OK)
	require.Equal(t, int64(4), res.FirstDivergent)
	require.Equal(t, int64(3), res.LastVerified)
	require.Len(t, res.Repaired, 1)
	rs = repair(t, rs, rs[10])
	res, _ = walk(rs, 12)
	require.True(t, res.OK, "%+v", res)
	require.Len(t, res.Repaired, 2)
}

// TestLegacyRepair: a repair entry written before repairs recorded their
// stretch covers the break it names up to itself; the rest is checked.
func TestLegacyRepair(t *testing.T) {
	t.Parallel()
	rs := chain(10)
	rs[4].Entry.Amount = 42
	legacy := audit.Entry{Seq: 11, Kind: audit.KindRepair, At: t0, Actor: "admin", Subject: "audit",
		Attrs: map[string]string{"last_verified": "4", "first_divergent": "5", "reason": "entry fields do not match their stored encoding"}}
	rs = append(rs, audit.Seal(rs[9].Hash, legacy))
	rs = grow(rs, 2)
	res, _ := walk(rs, 13)
	require.True(t, res.OK, "%+v", res)
	require.Equal(t, []audit.Break{{RepairSeq: 11, From: 5, To: 10, Resume: rs[9].Hash, Reason: legacy.Attrs["reason"],
		LastVerified: 4, FirstDivergent: 5, Legacy: true}}, res.Repaired)

	rs[1].Entry.Amount = 42
	res, _ = walk(rs, 13)
	require.False(t, res.OK, "history before a legacy repair is checked again")
	require.Equal(t, int64(2), res.FirstDivergent)
}

// TestRepairEntryMustVerify: a break is accepted only by a repair entry
// that is consistent with itself and verifies where it stands.
func TestRepairEntryMustVerify(t *testing.T) {
	t.Parallel()
	rs := chain(10)
	head := rs[9]
	rs[4].Entry.Amount = 42
	rs = repair(t, rs, head)
	b, ok := audit.ParseRepair(rs[10])
	require.True(t, ok)

	forged := clone(rs)
	forged[10].Entry.Attrs["repaired_to"] = "9"
	_, ok = audit.ParseRepair(forged[10])
	require.False(t, ok, "columns that no longer match the encoding")

	// A break given for an entry that is no repair is not confirmed.
	b.RepairSeq = 8
	v := audit.NewVerifier([]audit.Break{b})
	for _, r := range rs {
		require.True(t, v.Add(r))
	}
	res := v.Finish(11)
	require.False(t, res.OK)
	require.Equal(t, int64(5), res.FirstDivergent)
	require.Contains(t, res.Reason, "does not verify")
	d, ok := v.Divergence()
	require.True(t, ok)
	require.True(t, d.Unconfirmed)
	again := audit.PlanBreak(d, audit.Hash{}, 11, rs[10].Hash)
	require.Equal(t, []int64{5, 5}, []int64{again.From, again.To})
	require.Equal(t, b.Resume, again.Resume)
	require.Equal(t, b.Digest, again.Digest)
}

func TestDigest(t *testing.T) {
	t.Parallel()
	require.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", audit.Digest())
	rs := chain(2)
	require.NotEqual(t, audit.Digest(rs[0]), audit.Digest(rs[1]))
	edited := clone(rs)
	edited[0].Entry.Amount++
	require.NotEqual(t, audit.Digest(rs[0]), audit.Digest(edited[0]))
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
