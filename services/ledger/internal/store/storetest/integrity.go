package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// runIntegrity checks the repository of the ledger's checks of itself:
// findings open once per place until resolved, the scrubber's state, and
// the scrubber's slices of the journal and the balances.
func runIntegrity(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	t.Run("a finding is open once per place until resolved", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		insert := func(place, detail string, at time.Time) bool {
			t.Helper()
			var ok bool
			require.NoError(t, h.write(func(r repos) error {
				var err error
				ok, err = r.integrity.InsertFinding(ctx, store.Finding{ID: uuid.NewString(), Place: place, Kind: "log", Mode: "read_only",
					Seq: 3, EntryID: "e-1", Account: "available:ada", Detail: detail, FoundBy: "scrubber", FoundAt: at})
				return err
			}))
			return ok
		}
		open := func() ([]store.Finding, int) {
			t.Helper()
			got, n, err := h.read().integrity.OpenFindings(ctx, 10)
			require.NoError(t, err)
			return got, n
		}
		got, n := open()
		require.Empty(t, got)
		require.Zero(t, n)

		require.True(t, insert("log:3", "the entry changed", base.Add(2*time.Second)))
		require.False(t, insert("log:3", "found again", base.Add(3*time.Second)), "one open finding per place")
		require.True(t, insert("balance:available:ada", "the balance is off", base.Add(time.Second)))
		got, n = open()
		require.Equal(t, 2, n)
		require.Len(t, got, 2)
		require.Equal(t, []string{"balance:available:ada", "log:3"}, []string{got[0].Place, got[1].Place}, "oldest first")
		f := got[1]
		require.Equal(t, store.Finding{ID: f.ID, Place: "log:3", Kind: "log", Mode: "read_only", Seq: 3, EntryID: "e-1",
			Account: "available:ada", Detail: "the entry changed", FoundBy: "scrubber", FoundAt: base.Add(2 * time.Second)}, f)
		page, n, err := h.read().integrity.OpenFindings(ctx, 1)
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, 2, n, "the count is of every open finding")

		last, err := h.read().integrity.LastResolved(ctx)
		require.NoError(t, err)
		require.True(t, last.IsZero(), "nothing resolved yet: %v", last)
		var resolved int
		require.NoError(t, h.write(func(r repos) error {
			var err error
			resolved, err = r.integrity.ResolveFindings(ctx, base.Add(time.Minute), "admin")
			return err
		}))
		require.Equal(t, 2, resolved)
		last, err = h.read().integrity.LastResolved(ctx)
		require.NoError(t, err)
		require.Equal(t, base.Add(time.Minute), last.UTC())
		got, n = open()
		require.Empty(t, got)
		require.Zero(t, n)
		require.True(t, insert("log:3", "broken again", base.Add(2*time.Minute)), "a resolved place can be found again")
		var resolvedAt int64
		var by string
		require.NoError(t, h.DB.QueryRow(ctx, `SELECT resolved_at, resolved_by FROM audit_findings WHERE detail = 'the entry changed'`).
			Scan(&resolvedAt, &by))
		require.Equal(t, []any{database.Micros(base.Add(time.Minute)), "admin"}, []any{resolvedAt, by}, "the resolved one is kept")
	})

	t.Run("the scrubber's state round-trips", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		_, err := h.read().integrity.ScrubState(ctx)
		require.ErrorIs(t, err, store.ErrNotFound)
		for _, st := range []store.SealedState{
			{State: `{"cycle":1}`, KeyID: "0badf00d", MAC: "aa", UpdatedAt: base},
			{State: `{"cycle":2}`, KeyID: "0badf00d", MAC: "bb", UpdatedAt: base.Add(time.Second)},
		} {
			require.NoError(t, h.write(func(r repos) error { return r.integrity.SaveScrubState(ctx, st) }))
			got, err := h.read().integrity.ScrubState(ctx)
			require.NoError(t, err)
			require.Equal(t, st, got)
		}
	})

	t.Run("journal movements, links and balances are read a slice at a time", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		d := apply(t, h, 0, "ada", "", credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), 10*cc))
		s := apply(t, h, 1, "ada", "i-1", credit.Transfer(credit.KindStake, credit.Available("ada"), credit.Staked("ada", "i-1"), 4*cc))
		got, err := h.read().integrity.JournalMovements(ctx, []string{d.ID, s.ID, "ghost"})
		require.NoError(t, err)
		require.Equal(t, map[string]audit.Movement{
			d.ID: {EntryID: d.ID, Kind: "deposit", Contributor: "ada", Amount: 10 * cc,
				Lines: map[string]int64{"issuance": -10 * cc, "available:ada": 10 * cc}},
			s.ID: {EntryID: s.ID, Kind: "stake", Contributor: "ada", Idea: "i-1", Amount: 4 * cc,
				Lines: map[string]int64{"available:ada": -4 * cc, "staked:ada:i-1": 4 * cc}},
		}, got, "an id with no entry is absent")

		// d sequenced, s queued, a third recorded by nothing.
		r := audit.Seal(audit.Genesis, audit.Entry{Seq: 1, Kind: "deposit", At: base, Actor: "admin", Subject: "ada", Amount: 10 * cc,
			Attrs: map[string]string{"entry_id": d.ID}})
		r.EntryID = d.ID
		require.NoError(t, h.write(func(rs repos) error {
			if err := rs.audit.Append(ctx, []audit.Record{r}, nil, nil); err != nil {
				return err
			}
			return rs.audit.Enqueue(ctx, []store.Queued{{ID: uuid.NewString(), EntryID: s.ID,
				Entry: audit.Entry{Kind: "stake", At: base, Actor: "ada", Subject: "ada", Amount: 4 * cc}}})
		}))
		w := apply(t, h, 2, "ada", "", credit.Transfer(credit.KindWithdraw, credit.Available("ada"), credit.Issuance, cc))
		links, err := h.read().integrity.JournalLinks(ctx, store.JournalKey{}, 10)
		require.NoError(t, err)
		require.Equal(t, []store.JournalLink{
			{Key: store.JournalKey{CreatedAt: d.CreatedAt, ID: d.ID}, Kind: "deposit", AuditSeq: 1, AuditKind: "deposit"},
			{Key: store.JournalKey{CreatedAt: s.CreatedAt, ID: s.ID}, Kind: "stake", QueuedKind: "stake", LegacySeq: 1},
			{Key: store.JournalKey{CreatedAt: w.CreatedAt, ID: w.ID}, Kind: "withdraw", LegacySeq: 2},
		}, links, "in (created_at, id) order")
		after, err := h.read().integrity.JournalLinks(ctx, links[0].Key, 1)
		require.NoError(t, err)
		require.Equal(t, links[1:2], after, "after a key, at most limit")
		end, err := h.read().integrity.JournalLinks(ctx, links[2].Key, 10)
		require.NoError(t, err)
		require.Empty(t, end)

		sums, err := h.read().integrity.AccountSums(ctx, "", 10)
		require.NoError(t, err)
		require.Equal(t, []store.AccountSum{
			{Account: "available:ada", Balance: 5 * cc, Lines: 5 * cc, OwnersAgree: true},
			{Account: "issuance", Balance: -9 * cc, Lines: -9 * cc, OwnersAgree: true},
			{Account: "staked:ada:i-1", Balance: 4 * cc, Lines: 4 * cc, OwnersAgree: true},
		}, sums)
		// A balance edited, and a line that names another contributor.
		_, err = h.DB.Exec(ctx, `UPDATE cc_accounts SET balance = balance + 1000 WHERE account = 'issuance'`)
		require.NoError(t, err)
		_, err = h.DB.Exec(ctx, `UPDATE cc_lines SET contributor_id = 'bob' WHERE account = 'staked:ada:i-1'`)
		require.NoError(t, err)
		sums, err = h.read().integrity.AccountSums(ctx, "available:ada", 2)
		require.NoError(t, err)
		require.Equal(t, []store.AccountSum{
			{Account: "issuance", Balance: -9*cc + 1000, Lines: -9 * cc, OwnersAgree: true},
			{Account: "staked:ada:i-1", Balance: 4 * cc, Lines: 4 * cc, OwnersAgree: false},
		}, sums, "after an account, at most limit")

		outstanding, issuance, err := h.read().integrity.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, []money.Micros{0, -9*cc + 1000}, []money.Micros{outstanding, issuance},
			"the economy row as it is (apply does not move it), beside the issuance balance")
	})
}
