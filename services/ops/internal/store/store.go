// Package store defines what the ops service keeps (the graph layer and
// provider usage snapshots) and the errors its storage reports. sqlstore
// implements it on Postgres and SQLite; storetest is the conformance suite
// both engines must pass.
package store

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"time"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// Errors every implementation returns (wrapped or not).
var (
	ErrNotFound = errors.New("not found")
)

// EndpointError is CreateEdge's ErrNotFound for a missing endpoint node.
type EndpointError struct {
	// Field is "from_node_id" or "to_node_id".
	Field  string
	NodeID string
}

func (e *EndpointError) Error() string { return e.Field + ": node " + e.NodeID + " not found" }

// Unwrap makes errors.Is(err, ErrNotFound) hold.
func (e *EndpointError) Unwrap() error { return ErrNotFound }

//go:embed migrations
var migrations embed.FS

// Migrations are the ops schema's migrations (see the platform migrate package).
func Migrations() fs.FS { return migrate.Embedded(migrations) }

// Node is a graph node.
type Node struct {
	ID       string
	NodeType string
	// ExternalID is empty for a node without one.
	ExternalID string
	// Payload is a JSON object as compact text.
	Payload   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Edge is a typed, directed link between two nodes.
type Edge struct {
	ID         string
	EdgeType   string
	FromNodeID string
	ToNodeID   string
	Weight     float64
	// Payload is a JSON object as compact text.
	Payload   string
	CreatedAt time.Time
}

// EdgeFilter selects edges; empty fields do not filter.
type EdgeFilter struct {
	EdgeType   string
	FromNodeID string
	ToNodeID   string
	// Node, when set, selects the edges touching it in Direction.
	Node      string
	Direction graph.Direction
	Limit     int
	Offset    int
}

// UsageSnapshot is a stored usage snapshot.
type UsageSnapshot struct {
	usage.Snapshot
	ID     string
	Family string
	// Source is "live" (collected by ops) or "ingest" (posted by an agent).
	Source    string
	CreatedAt time.Time
}

// SnapshotsKept is how many snapshots of one provider are kept; older ones
// are deleted as new ones arrive.
const SnapshotsKept = 100

// Store is the ops service's storage.
type Store interface {
	// UpsertNode creates n, or, when a node with the same (NodeType,
	// ExternalID) exists, replaces its payload and returns it. created
	// reports which. A node without an ExternalID is always created.
	// Concurrent identical upserts yield one node.
	UpsertNode(ctx context.Context, n Node) (got Node, created bool, err error)
	// Node returns a node. ErrNotFound when there is none.
	Node(ctx context.Context, id string) (Node, error)
	// CreateEdge stores e. An *EndpointError (an ErrNotFound) when an
	// endpoint node does not exist.
	CreateEdge(ctx context.Context, e Edge) error
	// Edges returns one page of the edges f selects, oldest first (by
	// created_at, then id), and how many match in all. With f.Node set,
	// ErrNotFound when that node does not exist.
	Edges(ctx context.Context, f EdgeFilter) ([]Edge, int, error)

	// AddUsageSnapshot stores a snapshot and prunes its provider's history to
	// the SnapshotsKept most recent.
	AddUsageSnapshot(ctx context.Context, s UsageSnapshot) error
	// LatestUsageSnapshots returns the most recent snapshot of each provider
	// (by collected_at, then created_at), ordered by provider.
	LatestUsageSnapshots(ctx context.Context) ([]UsageSnapshot, error)
}
