package dbtest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnboundedScan(t *testing.T) {
	t.Parallel()
	grows := map[string]bool{"cc_entries": true, "incidents": true}
	for name, tc := range map[string]struct {
		plan, want string
	}{
		"a range": {`Index Scan using cc_entries_created on cc_entries  (cost=0.29..8.31 rows=1 width=8)
  Index Cond: (created_at > $1)`, ""},
		"a sequential scan": {`Aggregate  (cost=1.0..1.1 rows=1 width=8)
  ->  Seq Scan on incidents  (cost=0.00..1.00 rows=1 width=0)`, "Seq Scan on incidents"},
		"a whole index": {`Aggregate  (cost=1.0..1.1 rows=1 width=8)
  ->  Index Only Scan using incidents_created on incidents  (cost=0.00..1.00 rows=1 width=0)`,
			"Index Only Scan using incidents_created on incidents with no Index Cond and no Limit above it: a walk of the whole index"},
		"a whole index under a limit": {`Limit  (cost=0.15..0.2 rows=1 width=8)
  ->  Index Scan Backward using incidents_created on incidents  (cost=0.15..24.1 rows=500 width=8)
        Filter: (kind <> 'x'::text)`, ""},
		"a limit beside, not above": {`Nested Loop  (cost=0.15..0.2 rows=1 width=8)
  ->  Limit  (cost=0.15..0.2 rows=1 width=8)
        ->  Index Scan using x_pkey on x  (cost=0.15..24.1 rows=500 width=8)
  ->  Index Scan using incidents_created on incidents  (cost=0.15..24.1 rows=500 width=8)
        Filter: (id = x.id)`, "Index Scan using incidents_created on incidents with no Index Cond and no Limit above it: a walk of the whole index"},
		"a table that does not grow": {`Seq Scan on economy  (cost=0.00..1.00 rows=1 width=0)`, ""},
		"a partial index": {`Aggregate  (cost=1.0..1.1 rows=1 width=8)
  ->  Index Only Scan using incidents_open on incidents  (cost=0.00..1.00 rows=1 width=0)`, ""},
	} {
		require.Equal(t, tc.want, unboundedScan(tc.plan, grows, map[string]bool{"incidents_open": true}), name)
	}
	require.True(t, mentions("SELECT COUNT(*) FROM incidents WHERE x", []string{"incidents"}))
	require.False(t, mentions("SELECT COUNT(*) FROM incidents_x", []string{"incidents"}))
}
