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

// edgeWhere builds the WHERE clause of f. Equality on edge_type with an
// endpoint is what the (edge_type, from_node_id) and (edge_type,
// to_node_id) indexes serve.
func edgeWhere(f store.EdgeFilter) (string, []any) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args))))
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
		switch f.Direction {
		case graph.Outgoing:
			add("from_node_id = ?", f.Node)
		case graph.Incoming:
			add("to_node_id = ?", f.Node)
		default:
			add("(from_node_id = ? OR to_node_id = ?)", f.Node)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// edgesQuery is the page query of f and its arguments.
func edgesQuery(f store.EdgeFilter) (string, []any) {
	where, args := edgeWhere(f)
	n := len(args)
	return `SELECT id, edge_type, from_node_id, to_node_id, weight, payload, created_at FROM graph_edges` + where +
			fmt.Sprintf(` ORDER BY created_at, id LIMIT $%d OFFSET $%d`, n+1, n+2),
		append(args, f.Limit, f.Offset)
}

// List implements store.Edges.
func (s Edges) List(ctx context.Context, f store.EdgeFilter) ([]store.Edge, int, error) {
	where, args := edgeWhere(f)
	var total int
	if err := s.q.QueryRow(ctx, `SELECT COUNT(*) FROM graph_edges`+where, args...).Scan(&total); err != nil {
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
