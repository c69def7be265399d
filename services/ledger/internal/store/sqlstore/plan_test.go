package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// recorder is a querier that keeps the statement a repository sends and
// runs nothing.
type recorder struct {
	database.Querier
	query string
	args  []any
}

var errRecorded = errors.New("recorded")

func (r *recorder) Query(_ context.Context, q string, args ...any) (database.Rows, error) {
	r.query, r.args = q, args
	return nil, errRecorded
}

// genericPlan is the generic plan Postgres caches for the statement
// read sends (dbtest.GenericPlan).
func genericPlan(t *testing.T, db *database.DB, read func(q database.Querier) error) string {
	t.Helper()
	rec := &recorder{Querier: db}
	require.ErrorIs(t, read(rec), errRecorded)
	return dbtest.GenericPlan(t, db, rec.query, rec.args)
}

// TestTheCoherenceChecksReadsAreRangesOfIndexes: the reconciliation the
// monitor asks for every interval reads a range of the journal and of
// the log through their indexes, in the plan Postgres caches for it: no
// scan of the journal or the log, no hash of every journal entry, no sort
// of the journal. (The audit queue, drained as it fills, may be scanned.) (A cached plan did all three: the check grew with
// history, 153 ms at 20 000 deposits.)
func TestTheCoherenceChecksReadsAreRangesOfIndexes(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.Postgres, "ledger", store.Migrations())
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO cc_entries (id, kind, contributor_id, amount, audit_seq, created_at)
			SELECT 'e' || g, 'deposit', 'ada', 1, 0, g FROM generate_series(1, 20000) g`,
		`INSERT INTO audit_entries (seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash, entry_id)
			SELECT g, CASE WHEN g % 2 = 0 THEN 'deposit' ELSE 'spread_fee' END, g, 'ada', 'ada', 1,
				'{"entry_id":"e' || ((g + 1) / 2) || '"}', '00', lpad(to_hex(g), 64, '0'), lpad(to_hex(g), 64, '0'),
				CASE WHEN g % 2 = 0 THEN 'e' || (g / 2) END
			FROM generate_series(1, 40000) g`,
		`ANALYZE`,
	} {
		_, err := db.Exec(ctx, q)
		require.NoError(t, err)
	}
	for name, read := range map[string]func(q database.Querier) error{
		"journal links": func(q database.Querier) error {
			_, err := sqlstore.NewIntegrity(q).JournalLinks(ctx, store.JournalKey{CreatedAt: time.UnixMicro(19990), ID: "e19990"}, 10000)
			return err
		},
		"the log's side": func(q database.Querier) error {
			_, err := sqlstore.NewIntegrity(q).UnreconciledLog(ctx, 39980, 40000, 100)
			return err
		},
	} {
		plan := genericPlan(t, db, read)
		require.NotRegexp(t, `Seq Scan on (cc_entries|audit_entries)`, plan, "%s: the journal and the log are read by index:\n%s", name, plan)
		require.NotContains(t, plan, "hashed SubPlan", "%s:\n%s", name, plan)
		require.NotRegexp(t, `(^|->)\s*Sort\s`, plan, "%s:\n%s", name, plan)
	}
}
