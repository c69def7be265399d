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

// runEconomy checks the economy's one row and the locks that order the
// movements: the row's own (LockEconomy), the mode lock (LockModes) and
// the idempotency keys' (LockKey).
func runEconomy(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("the economy row starts normal and empty, and every field saves back", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		got, err := h.read().credit.Economy(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Economy{Mode: "normal", AuditHead: audit.Genesis}, got,
			"no treasury, no CC, no audit entry yet: the genesis head")

		saved := store.Economy{TreasuryUSD: 1_500 * cc, OutstandingCC: 1_200*cc + 7, Mode: "frozen", ModeReason: "incident 7",
			ModeActor: "signer:ops", ModeSince: base.Add(123 * time.Microsecond), AuditSeq: 42, AuditHead: hashOf("head-42"),
			UpdatedAt: base.Add(time.Second)}
		require.NoError(t, h.write(func(r repos) error {
			locked, err := r.credit.LockEconomy(ctx)
			if err != nil {
				return err
			}
			require.Equal(t, got, locked, "the locked read is the same row")
			return r.credit.SaveEconomy(ctx, saved)
		}))
		got, err = h.read().credit.Economy(ctx)
		require.NoError(t, err)
		require.Equal(t, saved, got)

		back := store.Economy{Mode: "normal", AuditHead: audit.Genesis}
		require.NoError(t, h.write(func(r repos) error { return r.credit.SaveEconomy(ctx, back) }))
		got, err = h.read().credit.Economy(ctx)
		require.NoError(t, err)
		require.Equal(t, back, got, "zero times and the genesis head round-trip as such")
	})

	t.Run("LockEconomy holds the row until the transaction ends; Economy does not wait", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		postgresOnly(t, h)
		ctx := context.Background()
		commit := hold(t, h, func(r repos) error {
			e, err := r.credit.LockEconomy(ctx)
			if err != nil {
				return err
			}
			e.OutstandingCC = 5 * cc
			return r.credit.SaveEconomy(ctx, e)
		})
		got, err := h.read().credit.Economy(ctx)
		require.NoError(t, err)
		require.Zero(t, got.OutstandingCC, "the unlocked read sees the last commit, without waiting")
		mustWait(t, h, func(r repos) error {
			_, err := r.credit.LockEconomy(ctx)
			return err
		}, "a second LockEconomy waits")
		require.NoError(t, commit())
		var after store.Economy
		mustNotWait(t, h, func(r repos) (err error) {
			after, err = r.credit.LockEconomy(ctx)
			return err
		}, "released at commit")
		require.Equal(t, money.Micros(5*cc), after.OutstandingCC, "the first transaction's save")
	})

	t.Run("movements share the mode lock; a change of mode takes it alone", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		modes := func(exclusive bool) func(r repos) error {
			return func(r repos) error { return r.credit.LockModes(ctx, exclusive) }
		}
		if h.DB.Engine() != database.Postgres {
			// SQLite's write lock orders them already: nothing to take.
			require.NoError(t, h.write(modes(false)))
			require.NoError(t, h.write(modes(true)))
			return
		}
		commit := hold(t, h, modes(false))
		mustNotWait(t, h, modes(false), "shared with another movement")
		mustWait(t, h, modes(true), "a change of mode waits for the movements")
		require.NoError(t, commit())

		commit = hold(t, h, modes(true))
		mustWait(t, h, modes(false), "a movement waits for the change of mode")
		mustWait(t, h, func(r repos) error {
			_, err := r.credit.Apply(ctx, store.Movement{ReadMode: true, Journal: store.JournalEntry{ID: uuid.NewString(),
				Entry: credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), cc), ContributorID: "ada",
				Amount: cc, CreatedAt: base}})
			return err
		}, "Apply's read of the mode takes the same lock")
		mustNotWait(t, h, func(r repos) error { return r.credit.LockKey(ctx, "stake", uuid.NewString()) },
			"an idempotency key's lock is another lock")
		require.NoError(t, commit())
		// The lock is the schema's: another test's movements, in its own
		// schema, never hold it, so an exclusive request goes through too.
		mustNotWait(t, h, modes(true), "released at commit")
		mustNotWait(t, h, modes(false), "and taken shared again")
	})

	t.Run("LockKey orders the transactions of one key; other keys and scopes go on", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		k1, k2 := uuid.NewString(), uuid.NewString()
		key := func(scope, k string) func(r repos) error {
			return func(r repos) error { return r.credit.LockKey(ctx, scope, k) }
		}
		if h.DB.Engine() != database.Postgres {
			require.NoError(t, h.write(key("stake", k1)), "SQLite's write lock orders them already")
			return
		}
		commit := hold(t, h, key("stake", k1))
		mustWait(t, h, key("stake", k1), "the same key waits")
		mustNotWait(t, h, key("stake", k2), "another key")
		mustNotWait(t, h, key("unstake", k1), "the same key in another scope")
		mustNotWait(t, h, func(r repos) error { return r.credit.LockModes(ctx, false) }, "the mode lock is another lock")
		require.NoError(t, commit())
		mustNotWait(t, h, key("stake", k1), "released at commit")
	})
}
