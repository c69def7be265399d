package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Edges implements store.Edges over a querier.
type Edges struct {
	q database.Querier
}

var _ store.Edges = Edges{}

// NewEdges returns the edge repository over q.
func NewEdges(q database.Querier) Edges { return Edges{q: q} }

// Create implements store.Edges.
func (s Edges) Create(ctx context.Context, e store.Edge) error {
	_, err := s.q.Exec(ctx, `INSERT INTO graph_edges (id, edge_type, from_node_id, to_node_id, weight, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.ID, e.EdgeType, e.FromNodeID, e.ToNodeID, e.Weight, e.Payload, database.Micros(e.CreatedAt))
	if err != nil {
		return fmt.Errorf("create edge: %w", err)
	}
	return nil
}

// edgeWhere builds the WHERE clause of f, its conditions each an equality
// on an indexed column. Every index on graph_edges ends in (created_at,
// id), so the page's order is a range of the index that serves the
// equalities (migration 0004).
func edgeWhere(f store.EdgeFilter) (string, []any) {
	return edgeWhereIn(f, f.Direction, false, 0)
}

// edgeWhereIn is edgeWhere with a node's edges taken in dir, its
// placeholders numbered from after+1; notFrom leaves out, of a node's
// incoming edges, those from the node itself (a loop, listed with its
// outgoing ones).
func edgeWhereIn(f store.EdgeFilter, dir graph.Direction, notFrom bool, after int) (string, []any) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", after+len(args))))
	}
	if f.EdgeType != "" {
		add("edge_type = ?", f.EdgeType)
	}
	if f.FromNodeID != "" {
		add("from_node_id = ?", f.FromNodeID)
	}
	if f.ToNodeID != "" {
		add("to_node_id = ?", f.ToNodeID)
	}
	if f.Node != "" {
		switch dir {
		case graph.Outgoing:
			add("from_node_id = ?", f.Node)
		case graph.Incoming:
			add("to_node_id = ?", f.Node)
			if notFrom {
				add("from_node_id <> ?", f.Node)
			}
		default:
			add("(from_node_id = ? OR to_node_id = ?)", f.Node)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// edgeColumns are an edge's columns, in List's order.
const edgeColumns = `id, edge_type, from_node_id, to_node_id, weight, payload, created_at`

// edgesCount is the query that counts the edges of f and its arguments:
// the kept count of every edge without a filter, a node's kept counts for
// its edges in a direction, else a range of the index that serves the
// filter. A node's edges in both directions are counted as two ranges, as
// they are read (edgesQuery): counted with an OR over the two endpoints,
// they were a scan of every edge.
func edgesCount(f store.EdgeFilter) (string, []any) {
	if f.EdgeType == "" && f.FromNodeID == "" && f.ToNodeID == "" {
		switch {
		case f.Node == "":
			// Every edge: kept by a trigger (migration 0005).
			return `SELECT COALESCE(SUM(n), 0) FROM row_counts WHERE name = 'graph_edges'`, nil
		case f.Direction == graph.Outgoing:
			// A node's edges: kept by a trigger (migration 0006).
			return `SELECT COALESCE(SUM(outgoing), 0) FROM node_edge_counts WHERE node_id = $1`, []any{f.Node}
		case f.Direction == graph.Incoming:
			return `SELECT COALESCE(SUM(incoming), 0) FROM node_edge_counts WHERE node_id = $1`, []any{f.Node}
		default:
			// A loop is listed once, with the outgoing edges.
			return `SELECT COALESCE(SUM(outgoing + incoming - loops), 0) FROM node_edge_counts WHERE node_id = $1`, []any{f.Node}
		}
	}
	out, in, args, both := nodeRanges(f)
	if !both {
		return `SELECT COUNT(*) FROM graph_edges` + out, args
	}
	return `SELECT (SELECT COUNT(*) FROM graph_edges` + out + `) + (SELECT COUNT(*) FROM graph_edges` + in + `)`, args
}

// nodeRanges are the WHERE clauses f reads and their arguments: one
// (edgeWhere's) unless f is a node's edges in both directions (both),
// which are two ranges: its outgoing edges (out) and its incoming ones
// less its loops, listed as outgoing (in), in's placeholders numbered
// after out's. edgesCount and edgesQuery read the same ranges.
func nodeRanges(f store.EdgeFilter) (out, in string, args []any, both bool) {
	if f.Node == "" || f.Direction == graph.Outgoing || f.Direction == graph.Incoming {
		out, args = edgeWhere(f)
		return out, "", args, false
	}
	out, args = edgeWhereIn(f, graph.Outgoing, false, 0)
	in, inArgs := edgeWhereIn(f, graph.Incoming, true, len(args))
	return out, in, append(args, inArgs...), true
}

// edgesQuery is the page query of f and its arguments. A node's edges in
// both directions are the merge of its outgoing range and its incoming
// one (less its loops, listed as outgoing), each cut at the page's end:
// an OR over the two endpoints read every edge of a hub and sorted them
// all for each page.
func edgesQuery(f store.EdgeFilter) (string, []any) {
	out, in, args, both := nodeRanges(f)
	n := len(args)
	if !both {
		return `SELECT ` + edgeColumns + ` FROM graph_edges` + out +
				fmt.Sprintf(` ORDER BY created_at, id LIMIT $%d OFFSET $%d`, n+1, n+2),
			append(args, f.Limit, f.Offset)
	}
	// Each range is cut at the page's end ($n+1, limit + offset).
	ranged := func(where string) string {
		return fmt.Sprintf(`SELECT * FROM (SELECT %s FROM graph_edges%s ORDER BY created_at, id LIMIT $%d)`, edgeColumns, where, n+1)
	}
	return `SELECT ` + edgeColumns + ` FROM (` + ranged(out) + ` o UNION ALL ` + ranged(in) + ` i) e` +
			fmt.Sprintf(` ORDER BY created_at, id LIMIT $%d OFFSET $%d`, n+2, n+3),
		append(args, f.Limit+f.Offset, f.Limit, f.Offset)
}

// List implements store.Edges.
func (s Edges) List(ctx context.Context, f store.EdgeFilter) ([]store.Edge, int, error) {
	count, args := edgesCount(f)
	var total int
	if err := s.q.QueryRow(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count edges: %w", err)
	}
	query, args := edgesQuery(f)
	rows, err := s.q.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list edges: %w", err)
	}
	defer rows.Close()
	out := []store.Edge{}
	for rows.Next() {
		var (
			e       store.Edge
			created int64
		)
		if err := rows.Scan(&e.ID, &e.EdgeType, &e.FromNodeID, &e.ToNodeID, &e.Weight, &e.Payload, &created); err != nil {
			return nil, 0, fmt.Errorf("list edges: %w", err)
		}
		e.CreatedAt = database.Time(created)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list edges: %w", err)
	}
	return out, total, nil
}
