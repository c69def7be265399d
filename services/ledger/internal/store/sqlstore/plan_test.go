package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// genericPlan is the plan Postgres caches for the statement read sends
// once a prepared statement's plan is generic (pgx prepares every
// statement, and Postgres switches to a generic plan after five
// executions): the plan every later call of the check runs, whatever
// its arguments.
func genericPlan(t *testing.T, db *database.DB, read func(q database.Querier) error) string {
	t.Helper()
	rec := &recorder{Querier: db}
	require.ErrorIs(t, read(rec), errRecorded)
	// EXECUTE takes its arguments as literals (a utility statement binds
	// no parameters).
	literals := make([]string, len(rec.args))
	for i, a := range rec.args {
		switch v := a.(type) {
		case string:
			literals[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case int, int64:
			literals[i] = fmt.Sprint(v)
		default:
			t.Fatalf("argument %d: a %T has no literal here", i+1, a)
		}
	}
	var lines []string
	require.NoError(t, db.Tx(context.Background(), func(tx database.Querier) error {
		ctx := context.Background()
		if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `PREPARE planned AS `+rec.query); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `EXPLAIN EXECUTE planned(`+strings.Join(literals, ", ")+`)`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			lines = append(lines, line)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DEALLOCATE planned`)
		return err
	}))
	return strings.Join(lines, "\n")
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
