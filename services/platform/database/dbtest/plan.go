package dbtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/foundryhq/foundry/services/platform/database"
)

// GenericPlan returns the plan Postgres caches for query once its
// prepared statement's plan is generic: the plan every later execution
// runs whatever its arguments (pgx prepares every statement, and
// Postgres switches to a generic plan after five executions), which is
// the one a plan test must hold to an index range. settings are SET
// LOCAL statements for the planner (enable_seqscan = off, say, to ask
// whether it can do without a scan). args are bound as literals, strings,
// numbers, booleans and nil only (EXECUTE is a utility statement and binds
// none).
func GenericPlan(t testing.TB, db *database.DB, query string, args []any, settings ...string) string {
	t.Helper()
	literals := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			literals[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case int, int32, int64, uint, uint32, uint64, float64:
			literals[i] = fmt.Sprint(v)
		case bool:
			literals[i] = strings.ToUpper(fmt.Sprint(v))
		case nil:
			literals[i] = "NULL"
		default:
			t.Fatalf("argument %d: a %T has no literal here", i+1, a)
		}
	}
	execute := `EXPLAIN EXECUTE planned`
	if len(literals) > 0 {
		execute += `(` + strings.Join(literals, ", ") + `)`
	}
	var lines []string
	err := db.Tx(context.Background(), func(tx database.Querier) error {
		ctx := context.Background()
		for _, set := range append([]string{"plan_cache_mode = force_generic_plan"}, settings...) {
			if _, err := tx.Exec(ctx, `SET LOCAL `+set); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `PREPARE planned AS `+query); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, execute)
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
	})
	if err != nil {
		t.Fatalf("plan of %s: %v", query, err)
	}
	return strings.Join(lines, "\n")
}
