package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// byAccount is e with its lines in account name order, as History reads
// them back.
func byAccount(e credit.Entry) credit.Entry {
	e.Lines = slices.Clone(e.Lines)
	slices.SortFunc(e.Lines, func(a, b credit.Line) int { return strings.Compare(a.Account.Name(), b.Account.Name()) })
	return e
}

// runJournal checks the journal's reads: a contributor's history, and the
// coherence check of the cached balances against the lines.
func runJournal(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("the coherence check finds a balance or a line that does not match its account", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		mint(t, h, 1, "github:octo", 5*cc)
		mint(t, h, 2, "bob", 5*cc)
		mis, err := h.read().credit.JournalMismatches(ctx)
		require.NoError(t, err)
		require.Empty(t, mis)

		_, err = h.DB.Exec(ctx, `UPDATE cc_lines SET contributor_id = 'github' WHERE account = 'available:github:octo'`)
		require.NoError(t, err)
		_, err = h.DB.Exec(ctx, `UPDATE cc_accounts SET balance = balance + 1 WHERE account = 'available:bob'`)
		require.NoError(t, err)
		mis, err = h.read().credit.JournalMismatches(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"available:bob", "available:github:octo"}, mis)
	})

	t.Run("a contributor's history pages newest first, each entry with its lines and the audit entry that records it", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		legacy := mint(t, h, 1, "ada", 10*cc) // at base+1s, with a legacy audit seq
		// move records a movement as the use cases do since the log is
		// sequenced in batches: audit seq 0, its audit entry queued.
		move := func(id, who, idea string, at time.Time, e credit.Entry) store.JournalEntry {
			t.Helper()
			je := store.JournalEntry{ID: id, Entry: e, ContributorID: who, IdeaID: idea, Amount: e.Lines[1].Delta, CreatedAt: at}
			require.NoError(t, h.write(func(r repos) error {
				_, err := r.credit.Apply(ctx, store.Movement{Journal: je, Audit: []store.Queued{{ID: uuid.NewString(), EntryID: id,
					Entry: audit.Entry{Kind: string(e.Kind), At: at, Actor: who, Subject: who, Amount: int64(e.Lines[1].Delta),
						Attrs: map[string]string{"entry_id": id}}}}})
				return err
			}))
			je.Entry = byAccount(e)
			return je
		}
		stake := move("j-2", "ada", "i:1", base.Add(2*time.Second),
			credit.Transfer(credit.KindStake, credit.Available("ada"), credit.Staked("ada", "i:1"), 4*cc))
		// Two in one microsecond: by id, the greater first.
		u1 := move("j-3a", "ada", "i:1", base.Add(3*time.Second),
			credit.Transfer(credit.KindUnstake, credit.Staked("ada", "i:1"), credit.Cooling("ada"), cc))
		u2 := move("j-3b", "ada", "i:1", base.Add(3*time.Second),
			credit.Transfer(credit.KindUnstake, credit.Staked("ada", "i:1"), credit.Available("ada"), cc))
		mint(t, h, 5, "bob", cc)
		legacy.Entry = byAccount(legacy.Entry)

		history := func(limit, offset int) []store.JournalEntry {
			t.Helper()
			got, _, err := h.read().credit.History(ctx, "ada", limit, offset)
			require.NoError(t, err)
			return got
		}
		require.Equal(t, []store.JournalEntry{u2, u1, stake, legacy}, history(10, 0),
			"newest first; the lines by account; the legacy entry's seq, 0 for those still queued")
		require.Equal(t, []store.JournalEntry{u1, stake}, history(2, 1), "a page")
		require.Equal(t, []store.JournalEntry{}, history(10, 4), "past the end: empty, not nil")

		// The sequencer records the stake at seq 7: its history shows it.
		rec := audit.Seal(audit.Genesis, audit.Entry{Seq: 7, Kind: "stake", At: stake.CreatedAt, Actor: "ada", Subject: "ada",
			Amount: int64(4 * cc), Attrs: map[string]string{"entry_id": stake.ID}})
		rec.EntryID = stake.ID
		require.NoError(t, h.write(func(r repos) error { return r.audit.Append(ctx, []audit.Record{rec}, nil, nil) }))
		stake.AuditSeq = 7
		require.Equal(t, []store.JournalEntry{u1, stake}, history(2, 1), "the audit entry that records it")
	})

	t.Run("a legacy audit seq records one journal entry: a second entry naming it writes nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		mint(t, h, 3, "ada", 5*cc)
		again := store.JournalEntry{ID: uuid.NewString(), ContributorID: "bob", Amount: cc, AuditSeq: 3, CreatedAt: base,
			Entry: credit.Transfer(credit.KindDistribution, credit.Issuance, credit.Available("bob"), cc)}
		err := h.write(func(r repos) error {
			_, err := r.credit.Apply(ctx, store.Movement{Journal: again})
			return err
		})
		require.ErrorIs(t, err, store.ErrAuditSeqTaken)
		b, err := h.read().credit.Balance(ctx, credit.Available("bob"))
		require.NoError(t, err)
		require.Zero(t, b, "rolled back")
		mint(t, h, 0, "bob", cc) // seq 0 (a sequenced-in-batches entry) is never taken
		mint(t, h, 0, "bob", cc)
		b, err = h.read().credit.Balance(ctx, credit.Available("bob"))
		require.NoError(t, err)
		require.Equal(t, money.Micros(2*cc), b)
	})
}
