// Package sqlstore implements the ops store on Postgres and SQLite with one
// set of SQL statements (see the platform database package).
package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Store is the SQL ops store.
type Store struct {
	db *database.DB
}

var _ store.Store = (*Store)(nil)

// New returns a store over an open, migrated database.
func New(db *database.DB) *Store { return &Store{db: db} }

const nodeColumns = `id, node_type, external_id, payload, created_at, updated_at`

func scanNode(row database.Row) (store.Node, error) {
	var (
		n                store.Node
		ext              *string
		created, updated int64
	)
	if err := row.Scan(&n.ID, &n.NodeType, &ext, &n.Payload, &created, &updated); err != nil {
		return store.Node{}, err
	}
	if ext != nil {
		n.ExternalID = *ext
	}
	n.CreatedAt, n.UpdatedAt = database.Time(created), database.Time(updated)
	return n, nil
}

// UpsertNode implements store.Store. The unique index on (node_type,
// external_id) decides races: INSERT ... ON CONFLICT DO UPDATE is atomic on
// both engines, so concurrent identical upserts all return one node, and the
// returned id tells whether this call created it.
func (s *Store) UpsertNode(ctx context.Context, n store.Node) (store.Node, bool, error) {
	query := `INSERT INTO graph_nodes (` + nodeColumns + `) VALUES ($1, $2, $3, $4, $5, $6)`
	if n.ExternalID != "" {
		query += ` ON CONFLICT (node_type, external_id) WHERE external_id IS NOT NULL
			DO UPDATE SET payload = excluded.payload, updated_at = excluded.updated_at`
	}
	got, err := scanNode(s.db.QueryRow(ctx, query+` RETURNING `+nodeColumns,
		n.ID, n.NodeType, database.NullString(n.ExternalID), n.Payload, database.Micros(n.CreatedAt), database.Micros(n.UpdatedAt)))
	if err != nil {
		return store.Node{}, false, fmt.Errorf("upsert node %s/%s: %w", n.NodeType, n.ExternalID, err)
	}
	return got, got.ID == n.ID, nil
}

// Node implements store.Store.
func (s *Store) Node(ctx context.Context, id string) (store.Node, error) {
	n, err := scanNode(s.db.QueryRow(ctx, `SELECT `+nodeColumns+` FROM graph_nodes WHERE id = $1`, id))
	if errors.Is(err, database.ErrNoRows) {
		return store.Node{}, fmt.Errorf("node %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Node{}, fmt.Errorf("find node %s: %w", id, err)
	}
	return n, nil
}

// CreateEdge implements store.Store. Nodes are never deleted, so checking
// the endpoints before the insert is enough; the foreign keys back it up.
func (s *Store) CreateEdge(ctx context.Context, e store.Edge) error {
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		for _, end := range []struct{ field, id string }{{"from_node_id", e.FromNodeID}, {"to_node_id", e.ToNodeID}} {
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM graph_nodes WHERE id = $1`, end.id).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return &store.EndpointError{Field: end.field, NodeID: end.id}
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO graph_edges (id, edge_type, from_node_id, to_node_id, weight, payload, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			e.ID, e.EdgeType, e.FromNodeID, e.ToNodeID, e.Weight, e.Payload, database.Micros(e.CreatedAt))
		return err
	})
	var ee *store.EndpointError
	if errors.As(err, &ee) {
		return err
	}
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

// Edges implements store.Store.
func (s *Store) Edges(ctx context.Context, f store.EdgeFilter) ([]store.Edge, int, error) {
	if f.Node != "" {
		if _, err := s.Node(ctx, f.Node); err != nil {
			return nil, 0, err
		}
	}
	where, args := edgeWhere(f)
	var total int
	if err := s.db.QueryRow(ctx, `SELECT COUNT(*) FROM graph_edges`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count edges: %w", err)
	}
	query, args := edgesQuery(f)
	rows, err := s.db.Query(ctx, query, args...)
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

// AddUsageSnapshot implements store.Store.
func (s *Store) AddUsageSnapshot(ctx context.Context, snap store.UsageSnapshot) error {
	metrics, err := json.Marshal(snap.Metrics)
	if err != nil {
		return fmt.Errorf("encode usage metrics: %w", err)
	}
	err = s.db.Tx(ctx, func(tx database.Querier) error {
		if _, err := tx.Exec(ctx, `INSERT INTO usage_snapshots (id, provider, family, source, metrics, collected_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			snap.ID, snap.Provider, snap.Family, snap.Source, string(metrics), database.Micros(snap.CollectedAt), database.Micros(snap.CreatedAt)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM usage_snapshots WHERE provider = $1 AND id NOT IN (
			SELECT id FROM usage_snapshots WHERE provider = $1
			ORDER BY collected_at DESC, created_at DESC, id DESC LIMIT $2)`, snap.Provider, store.SnapshotsKept)
		return err
	})
	if err != nil {
		return fmt.Errorf("store %s usage snapshot: %w", snap.Provider, err)
	}
	return nil
}

// LatestUsageSnapshots implements store.Store.
func (s *Store) LatestUsageSnapshots(ctx context.Context) ([]store.UsageSnapshot, error) {
	rows, err := s.db.Query(ctx, `
		SELECT id, provider, family, source, metrics, collected_at, created_at FROM (
			SELECT id, provider, family, source, metrics, collected_at, created_at,
				ROW_NUMBER() OVER (PARTITION BY provider ORDER BY collected_at DESC, created_at DESC, id DESC) AS rn
			FROM usage_snapshots) latest
		WHERE rn = 1 ORDER BY provider`)
	if err != nil {
		return nil, fmt.Errorf("latest usage snapshots: %w", err)
	}
	defer rows.Close()
	var out []store.UsageSnapshot
	for rows.Next() {
		var (
			snap             store.UsageSnapshot
			metrics          string
			collected, added int64
		)
		if err := rows.Scan(&snap.ID, &snap.Provider, &snap.Family, &snap.Source, &metrics, &collected, &added); err != nil {
			return nil, fmt.Errorf("latest usage snapshots: %w", err)
		}
		if err := json.Unmarshal([]byte(metrics), &snap.Metrics); err != nil {
			return nil, fmt.Errorf("decode usage snapshot %s: %w", snap.ID, err)
		}
		snap.CollectedAt, snap.CreatedAt = database.Time(collected), database.Time(added)
		out = append(out, snap)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest usage snapshots: %w", err)
	}
	return out, nil
}
