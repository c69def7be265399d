package sqlstore_test

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// TestMigrationIndexesAuditSeqOverDuplicates builds a database on which
// two journal entries already share an audit seq (the head was rewound
// before migration 0011 existed) and checks that the migration applies,
// that the coherence reconciliation reports the duplicate, and that no
// new entry can take that seq.
func TestMigrationIndexesAuditSeqOverDuplicates(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "ledger", nil)
		_, err := migrate.Up(ctx, db, migrationsBefore(t, "0011"))
		require.NoError(t, err)

		at := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		dep := credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), cc)
		for i, id := range []string{"first", "second", "third"} {
			require.NoError(t, db.Tx(ctx, func(q database.Querier) error {
				_, err := sqlstore.NewCredit(q).Apply(ctx, store.Movement{Journal: store.JournalEntry{ID: id, Entry: dep, ContributorID: "ada",
					Amount: cc, AuditSeq: 1, CreatedAt: at.Add(time.Duration(i) * time.Second)}})
				return err
			}))
		}
		rec := audit.Seal(audit.Genesis, audit.Entry{Seq: 1, Kind: "deposit", At: at, Actor: "ada", Subject: "ada", Amount: cc,
			Attrs: map[string]string{"entry_id": "third", "unit": "micro_cc"}})
		// As the ledger wrote it then (audit_entries had no entry_id yet).
		_, err = db.Exec(ctx, `INSERT INTO audit_entries (seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash)
			VALUES (1, 'deposit', $1, 'ada', 'ada', $2, '{"entry_id":"third","unit":"micro_cc"}', $3, $4, $5)`,
			database.Micros(at), int64(cc), hex.EncodeToString(rec.Encoded), rec.PrevHash.String(), rec.Hash.String())
		require.NoError(t, err)

		_, err = migrate.Up(ctx, db, store.Migrations())
		require.NoError(t, err, "the migration applies over duplicates")

		got, err := sqlstore.NewCredit(db).Unreconciled(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []store.Discrepancy{
			{AuditSeq: 1, EntryID: "first", Problem: "journal entry first (deposit) names audit entry 1, which does not record it"},
			{AuditSeq: 1, EntryID: "second", Problem: "journal entry second (deposit) names audit entry 1, which does not record it"},
		}, got)

		err = db.Tx(ctx, func(q database.Querier) error {
			_, err := sqlstore.NewCredit(q).Apply(ctx, store.Movement{Journal: store.JournalEntry{ID: "fourth", Entry: dep, ContributorID: "ada",
				Amount: cc, AuditSeq: 1, CreatedAt: at.Add(time.Minute)}})
			return err
		})
		require.ErrorIs(t, err, store.ErrAuditSeqTaken, "the shared seq cannot be taken again")
	})
}
