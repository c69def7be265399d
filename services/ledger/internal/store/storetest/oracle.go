package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runOracle checks the oracle readings with the breaker state they left,
// the incidents, and the signed freezes' nonces.
func runOracle(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("oracle readings keep their source, verdict and breaker state", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		_, err := h.read().credit.LatestReading(ctx)
		require.ErrorIs(t, err, store.ErrNotFound)

		opened := base.Add(2 * time.Minute)
		for i, r := range []store.OracleReading{
			{ID: "r1", Source: "http", Verdict: credit.Accepted, State: credit.BreakerState{LastGood: 100 * cc}},
			{ID: "r2", Source: "http", Verdict: credit.Tripped, State: credit.BreakerState{Tripped: true, LastGood: 100 * cc, TrippedAt: opened}},
			{ID: "r3", Source: "manual", Verdict: credit.Held, State: credit.BreakerState{Tripped: true, Clean: 2, LastGood: 100 * cc, TrippedAt: opened}},
		} {
			r.Reading = credit.Reading{Price: money.Micros(100+50*i) * cc, At: base.Add(time.Duration(i+1) * time.Minute)}
			require.NoError(t, h.write(func(rs repos) error { return rs.credit.InsertReading(ctx, r) }))
		}
		last, err := h.read().credit.LatestReading(ctx)
		require.NoError(t, err)
		require.Equal(t, "r3", last.ID)
		require.Equal(t, "manual", last.Source)
		require.Equal(t, credit.Held, last.Verdict)
		require.Equal(t, credit.BreakerState{Tripped: true, Clean: 2, LastGood: 100 * cc, TrippedAt: opened}, last.State)
		require.Equal(t, credit.Reading{Price: 200 * cc, At: base.Add(3 * time.Minute), Source: "manual", Verdict: credit.Held}, last.Reading)

		got, err := h.read().credit.ReadingsSince(ctx, base.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, []credit.Reading{
			{Price: 100 * cc, At: base.Add(time.Minute), Source: "http", Verdict: credit.Accepted},
			{Price: 150 * cc, At: base.Add(2 * time.Minute), Source: "http", Verdict: credit.Tripped},
			{Price: 200 * cc, At: base.Add(3 * time.Minute), Source: "manual", Verdict: credit.Held},
		}, got)
		require.True(t, got[0].Accepted())
		require.False(t, got[1].Accepted())

		// A closed breaker has no trip time, whatever the state carried.
		require.NoError(t, h.write(func(rs repos) error {
			return rs.credit.InsertReading(ctx, store.OracleReading{ID: "r4", Source: "http", Verdict: credit.Recovered,
				Reading: credit.Reading{Price: 101 * cc, At: base.Add(9 * time.Minute)},
				State:   credit.BreakerState{LastGood: 101 * cc, TrippedAt: opened}})
		}))
		last, err = h.read().credit.LatestReading(ctx)
		require.NoError(t, err)
		require.Equal(t, credit.BreakerState{LastGood: 101 * cc}, last.State)
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

	t.Run("incidents list newest first, paged, with their resolution", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		wantTotal := 0
		list := func(limit, offset int) []store.Incident {
			t.Helper()
			got, total, err := h.read().credit.ListIncidents(ctx, nil, limit, offset)
			require.NoError(t, err)
			require.Equal(t, wantTotal, total, "every incident is counted, whatever the page")
			return got
		}
		require.Equal(t, []store.Incident{}, list(10, 0), "none: empty, not nil")
		open := store.Incident{ID: "inc-1", Kind: "freeze", Severity: "critical", Detail: "signed freeze", Actor: "signer:ops",
			CreatedAt: base.Add(time.Microsecond)}
		resolved := store.Incident{ID: "inc-2", Kind: "oracle_tripped", Severity: "warning", Detail: "rate moved 30%",
			Actor: "oracle", CreatedAt: base.Add(time.Minute), ResolvedAt: base.Add(2 * time.Minute)}
		tie := store.Incident{ID: "inc-3", Kind: "monitor", Severity: "info", Detail: "", Actor: "monitor",
			CreatedAt: base.Add(time.Minute)} // created with inc-2: the greater id first
		for _, i := range []store.Incident{resolved, open, tie} {
			require.NoError(t, h.write(func(r repos) error { return r.credit.InsertIncident(ctx, i) }))
		}
		wantTotal = 3
		require.Equal(t, []store.Incident{tie, resolved, open}, list(10, 0), "every field; no resolution reads back zero")
		require.Equal(t, []store.Incident{resolved}, list(1, 1), "a page")
		require.Equal(t, []store.Incident{}, list(10, 3))
		after := store.IncidentKey{CreatedAt: tie.CreatedAt, ID: tie.ID}
		page, total, err := h.read().credit.ListIncidents(ctx, &after, 10, 2)
		require.NoError(t, err)
		require.Equal(t, []store.Incident{resolved, open}, page, "a keyset page: after the first, its twin in time next; the offset ignored")
		require.Equal(t, 3, total)
		counts, err := h.read().credit.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"cc_entries": 0, "incidents": 3}, counts)
	})
}
