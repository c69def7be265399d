package dbtest

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/foundryhq/foundry/services/platform/database"
)

// Statement is a statement a Recording kept, with its arguments.
type Statement struct {
	Query string
	Args  []any
}

// Recording keeps the statements sent through the Queriers it wraps, so
// a test can ask Postgres how it plans each statement a use case sends
// (RequireIndexReads): wrap the Querier a use case's repositories get,
// run the use case, Take what it sent. Safe for concurrent use.
type Recording struct {
	mu   sync.Mutex
	seen []Statement
}

// Wrap returns q, keeping every statement sent through it.
func (r *Recording) Wrap(q database.Querier) database.Querier { return recorder{q, r} }

func (r *Recording) keep(query string, args []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, Statement{Query: query, Args: args})
}

// Take returns the statements sent since the last Take and forgets them.
func (r *Recording) Take() []Statement {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.seen
	r.seen = nil
	return out
}

// recorder runs every statement on its Querier and keeps it.
type recorder struct {
	database.Querier
	r *Recording
}

func (c recorder) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	c.r.keep(query, args)
	return c.Querier.Exec(ctx, query, args...)
}

func (c recorder) Query(ctx context.Context, query string, args ...any) (database.Rows, error) {
	c.r.keep(query, args)
	return c.Querier.Query(ctx, query, args...)
}

func (c recorder) QueryRow(ctx context.Context, query string, args ...any) database.Row {
	c.r.keep(query, args)
	return c.Querier.QueryRow(ctx, query, args...)
}

func (c recorder) SendBatch(ctx context.Context, b *database.Batch) error {
	b.Each(c.r.keep)
	return c.Querier.SendBatch(ctx, b)
}

// scanNode is a plan node that reads a table: its kind, its index (if
// any) and its table.
var scanNode = regexp.MustCompile(`^(?:->\s+)?(Seq Scan|Parallel Seq Scan|Bitmap Heap Scan|(?:Index|Index Only) Scan(?: Backward)?)(?: using (\S+))? on (\w+)`)

// RequireIndexReads fails unless Postgres reads every table of growing
// in each statement's generic plan (GenericPlan, with sequential and
// bitmap scans off, so a scan left in the plan is one no index can
// replace) by a range of an index: no sequential scan of it, and no index
// scan without an Index Cond (a walk of the whole index) unless a Limit
// above it stops the walk or the index is partial (it holds what is live,
// as audit_findings_open holds the open findings, not their history). A statement that reads none of growing passes
// whatever its plan; so do writes (INSERT, UPDATE and DELETE plans are
// checked alike: their WHERE must be a range too). what names the route
// for the failure.
func RequireIndexReads(t testing.TB, db *database.DB, what string, stmts []Statement, growing ...string) {
	t.Helper()
	grows := map[string]bool{}
	for _, g := range growing {
		grows[g] = true
	}
	partial := partialIndexes(t, db)
	checked := map[string]bool{}
	for _, st := range stmts {
		if checked[st.Query] || !mentions(st.Query, growing) {
			continue
		}
		checked[st.Query] = true
		plan := GenericPlan(t, db, st.Query, st.Args, "enable_seqscan = off", "enable_bitmapscan = off")
		if bad := unboundedScan(plan, grows, partial); bad != "" {
			t.Errorf("%s: %s\nstatement: %s\nplan:\n%s", what, bad, strings.Join(strings.Fields(st.Query), " "), plan)
		}
	}
}

// partialIndexes are the names of the partial indexes of db's schema.
func partialIndexes(t testing.TB, db *database.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT c.relname FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE i.indpred IS NOT NULL AND n.nspname = current_schema()`)
	if err != nil {
		t.Fatalf("list the partial indexes: %v", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatalf("list the partial indexes: %v", err)
		}
		out[name] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("list the partial indexes: %v", err)
	}
	return out
}

// mentions says whether query names one of tables.
func mentions(query string, tables []string) bool {
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		for _, t := range tables {
			if w == t {
				return true
			}
		}
	}
	return false
}

// unboundedScan names the first read of a growing table in plan that is
// not a bounded range of an index ("" when there is none).
func unboundedScan(plan string, grows, partial map[string]bool) string {
	lines := strings.Split(plan, "\n")
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	for i, l := range lines {
		m := scanNode.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || !grows[m[3]] {
			continue
		}
		scan := m[1] + " on " + m[3]
		if m[2] != "" {
			scan = m[1] + " using " + m[2] + " on " + m[3]
		}
		if !strings.HasPrefix(m[1], "Index") {
			return scan
		}
		// Its properties are the lines below it, indented deeper, up to
		// the next node.
		ranged := false
		for _, p := range lines[i+1:] {
			tp := strings.TrimSpace(p)
			if indent(p) <= indent(l) || strings.HasPrefix(tp, "->") {
				break
			}
			if strings.HasPrefix(tp, "Index Cond:") {
				ranged = true
			}
		}
		if ranged || partial[m[2]] || limitedAbove(lines[:i], indent(l)) {
			continue
		}
		return scan + " with no Index Cond and no Limit above it: a walk of the whole index"
	}
	return ""
}

// limitedAbove says whether a Limit node is an ancestor of the node
// indented at depth below above.
func limitedAbove(above []string, depth int) bool {
	for k := len(above) - 1; k >= 0; k-- {
		l := above[k]
		d := len(l) - len(strings.TrimLeft(l, " "))
		tl := strings.TrimSpace(l)
		isNode := strings.HasPrefix(tl, "->") || k == 0
		if !isNode || d >= depth {
			continue
		}
		depth = d
		if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(tl, "->")), "Limit") {
			return true
		}
	}
	return false
}

// RequireCallsReadIndexRanges runs each of calls (a use case's read, named
// by its route) and holds the statements it sent through rec to
// RequireIndexReads: the plan test of a service's polled routes.
func RequireCallsReadIndexRanges(t testing.TB, db *database.DB, rec *Recording, calls map[string]func() error, growing ...string) {
	t.Helper()
	rec.Take()
	for name, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		stmts := rec.Take()
		if len(stmts) == 0 {
			t.Fatalf("%s: sent no statement through the recording", name)
		}
		RequireIndexReads(t, db, name, stmts, growing...)
	}
}
