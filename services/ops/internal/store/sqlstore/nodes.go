package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Nodes implements store.Nodes over a querier.
type Nodes struct {
	q database.Querier
}

var _ store.Nodes = Nodes{}

// NewNodes returns the node repository over q.
func NewNodes(q database.Querier) Nodes { return Nodes{q: q} }

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

// Upsert implements store.Nodes. The unique index on (node_type,
// external_id) decides races: INSERT ... ON CONFLICT DO UPDATE is atomic on
// both engines, so concurrent identical upserts all return one node, and the
// returned id tells whether this call created it.
func (s Nodes) Upsert(ctx context.Context, n store.Node) (store.Node, bool, error) {
	query := `INSERT INTO graph_nodes (` + nodeColumns + `) VALUES ($1, $2, $3, $4, $5, $6)`
	if n.ExternalID != "" {
		query += ` ON CONFLICT (node_type, external_id) WHERE external_id IS NOT NULL
			DO UPDATE SET payload = excluded.payload, updated_at = excluded.updated_at`
	}
	got, err := scanNode(s.q.QueryRow(ctx, query+` RETURNING `+nodeColumns,
		n.ID, n.NodeType, database.NullString(n.ExternalID), n.Payload, database.Micros(n.CreatedAt), database.Micros(n.UpdatedAt)))
	if err != nil {
		return store.Node{}, false, fmt.Errorf("upsert node %s/%s: %w", n.NodeType, n.ExternalID, err)
	}
	return got, got.ID == n.ID, nil
}

// Get implements store.Nodes.
func (s Nodes) Get(ctx context.Context, id string) (store.Node, error) {
	n, err := scanNode(s.q.QueryRow(ctx, `SELECT `+nodeColumns+` FROM graph_nodes WHERE id = $1`, id))
	if errors.Is(err, database.ErrNoRows) {
		return store.Node{}, fmt.Errorf("node %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Node{}, fmt.Errorf("find node %s: %w", id, err)
	}
	return n, nil
}
