package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runAudit checks the audit chain's storage (records round-trip, the
// repair entries verification reads first) and the freeze nonces.
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
		newest, err := h.read().audit.Recent(ctx, 2, 1)
		require.NoError(t, err)
		require.Equal(t, []audit.Record{recs[4], recs[3]}, newest)
	})

	t.Run("a freeze nonce is recorded once per signer, across transactions, until pruned", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		record := func(signer, nonce string, issued time.Time) error {
			return h.write(func(r repos) error {
				return r.credit.RecordFreezeNonce(ctx, store.FreezeNonce{SignerID: signer, Nonce: nonce, IssuedAt: issued, SeenAt: issued})
			})
		}
		require.NoError(t, record("ops", "00112233445566778899aabbccddeeff", base))
		require.ErrorIs(t, record("ops", "00112233445566778899aabbccddeeff", base.Add(time.Minute)), store.ErrAlreadyExists)
		require.NoError(t, record("audit", "00112233445566778899aabbccddeeff", base), "another signer's nonce")
		require.NoError(t, record("ops", "ffeeddccbbaa99887766554433221100", base.Add(10*time.Minute)))

		var pruned int
		require.NoError(t, h.write(func(r repos) (err error) {
			pruned, err = r.credit.PruneFreezeNonces(ctx, base.Add(time.Minute))
			return err
		}))
		require.Equal(t, 2, pruned, "the two issued before the cut")
		require.NoError(t, record("ops", "00112233445566778899aabbccddeeff", base.Add(11*time.Minute)), "forgotten")
		require.ErrorIs(t, record("ops", "ffeeddccbbaa99887766554433221100", base), store.ErrAlreadyExists, "kept")
	})
}
