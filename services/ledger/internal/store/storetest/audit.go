package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runAudit checks the audit chain's storage: records round-trip, and the
// repair entries verification reads first.
func runAudit(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("audit records round-trip; repairs are read up to a seq", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		var recs []audit.Record
		prev := audit.Genesis
		for seq := int64(1); seq <= 6; seq++ {
			e := audit.Entry{Seq: seq, Kind: "deposit", At: base.Add(time.Duration(seq) * time.Second), Actor: "admin",
				Subject: "ada", Amount: seq * cc, Attrs: map[string]string{"unit": "micro_cc"}}
			if seq == 3 || seq == 5 {
				e = audit.RepairEntry(seq, e.At, "admin", audit.Result{LastVerified: 1, FirstDivergent: 2, Reason: "x"},
					audit.Break{From: 2, To: 2, Digest: audit.Digest()})
			}
			r := audit.Seal(prev, e)
			recs, prev = append(recs, r), r.Hash
			require.NoError(t, h.write(func(r repos) error { return r.audit.Append(ctx, recs[len(recs)-1:], nil, nil) }))
		}
		err := h.write(func(r repos) error { return r.audit.Append(ctx, recs[:1], nil, nil) })
		require.ErrorIs(t, err, store.ErrAlreadyExists)

		got, err := h.read().audit.Range(ctx, 0, 100)
		require.NoError(t, err)
		require.Equal(t, recs, got)
		require.Equal(t, audit.Verify(got), audit.Result{OK: true, Checked: 6, LastVerified: 6})

		for upTo, want := range map[int64][]audit.Record{2: {}, 3: {recs[2]}, 4: {recs[2]}, 6: {recs[2], recs[4]}} {
			got, err := h.read().audit.Repairs(ctx, upTo)
			require.NoError(t, err)
			require.Equal(t, want, got, "repairs up to %d", upTo)
		}
		listed := func(rs ...audit.Record) []store.ListedRecord {
			out := make([]store.ListedRecord, len(rs))
			for i, r := range rs {
				out[i] = store.ListedRecord{Record: r}
			}
			return out
		}
		newest, err := h.read().audit.Recent(ctx, 0, 2, 1)
		require.NoError(t, err)
		require.Equal(t, listed(recs[4], recs[3]), newest, "no contributor ada: no handles")
		older, err := h.read().audit.Recent(ctx, 4, 2, 0)
		require.NoError(t, err)
		require.Equal(t, listed(recs[2], recs[1]), older, "before seq 4: a keyset page")
		older, err = h.read().audit.Recent(ctx, 2, 5, 0)
		require.NoError(t, err)
		require.Equal(t, listed(recs[0]), older, "the oldest page")
	})

	t.Run("the key changes are the key_changed entries, in seq order", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		none, err := h.read().audit.KeyChanges(ctx)
		require.NoError(t, err)
		require.Empty(t, none)
		var recs []audit.Record
		prev := audit.Genesis
		for i, kind := range []string{"deposit", "key_changed", "stake", "key_changed"} {
			seq := int64(i + 1)
			e := audit.Entry{Seq: seq, Kind: kind, At: base.Add(time.Duration(seq) * time.Second), Actor: "sequencer",
				Subject: "foundry-audit", Attrs: map[string]string{"from": "old", "to": "new"}}
			r := audit.Seal(prev, e)
			recs, prev = append(recs, r), r.Hash
		}
		require.NoError(t, h.write(func(r repos) error { return r.audit.Append(ctx, recs, nil, nil) }))
		got, err := h.read().audit.KeyChanges(ctx)
		require.NoError(t, err)
		require.Equal(t, []audit.Record{recs[1], recs[3]}, got)
	})

	t.Run("listed audit records name their actor and subject by handle when they are registered contributors", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		ada := register(t, h, "ada", base)
		require.NoError(t, h.write(func(r repos) error { return r.identity.EnsureContributor(ctx, Implicit("github:octo", base)) }))
		entries := []audit.Entry{
			{Kind: "stake", Actor: ada.ID, Subject: ada.ID},                // her own movement
			{Kind: "deposit", Actor: "admin", Subject: ada.ID},             // for her, by the administrator
			{Kind: "distribution", Actor: "admin", Subject: "github:octo"}, // a contributor without a handle
			{Kind: "freeze", Actor: "signer:ops", Subject: "economy"},      // no contributor at all
		}
		var recs []audit.Record
		prev := audit.Genesis
		for i, e := range entries {
			e.Seq, e.At = int64(i+1), base.Add(time.Duration(i)*time.Second)
			r := audit.Seal(prev, e)
			recs, prev = append(recs, r), r.Hash
		}
		require.NoError(t, h.write(func(r repos) error { return r.audit.Append(ctx, recs, nil, nil) }))
		got, err := h.read().audit.Recent(ctx, 0, 10, 0)
		require.NoError(t, err)
		require.Equal(t, []store.ListedRecord{
			{Record: recs[3]},
			{Record: recs[2]},
			{Record: recs[1], SubjectHandle: "ada"},
			{Record: recs[0], ActorHandle: "ada", SubjectHandle: "ada"},
		}, got)
		plain, err := h.read().audit.Range(ctx, 0, 10)
		require.NoError(t, err)
		require.Equal(t, recs, plain, "the records themselves are what was sealed")
	})

	t.Run("storage counts: the audit chain's tables and the journal's", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		counts, err := h.read().audit.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"audit_entries": 0, "audit_queue": 0, "audit_tree": 0}, counts)

		mint(t, h, 1, "ada", cc)
		mint(t, h, 2, "bob", cc)
		r1 := audit.Seal(audit.Genesis, audit.Entry{Seq: 1, Kind: "freeze", At: base, Actor: "signer:ops", Subject: "economy"})
		require.NoError(t, h.write(func(r repos) error {
			if err := r.audit.Append(ctx, []audit.Record{r1}, nil, map[int64]audit.Hash{0: hashOf("0"), 1: hashOf("1")}); err != nil {
				return err
			}
			return r.audit.Enqueue(ctx, []store.Queued{{ID: "q-1", Entry: audit.Entry{Kind: "unfreeze", At: base, Actor: "signer:ops",
				Subject: "economy"}}})
		}))
		counts, err = h.read().audit.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"audit_entries": 1, "audit_queue": 1, "audit_tree": 2}, counts)
		counts, err = h.read().credit.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"cc_entries": 2, "incidents": 0}, counts)
	})
}
