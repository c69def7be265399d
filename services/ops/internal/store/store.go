// Package store defines what the ops service keeps (the graph layer,
// provider usage snapshots and the economy monitor's checks), its
// repositories, one per topic, and the errors they report. Repositories
// work over a querier (the pool or the use case's transaction) and never
// open a transaction: the use-case layer opens one per use case that
// writes. sqlstore implements them on Postgres and SQLite; storetest is
// the conformance suite both engines must pass.
package store

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"time"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// Errors every implementation returns (wrapped or not).
var (
	ErrNotFound = errors.New("not found")
)

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

// Nodes are the graph's nodes.
type Nodes interface {
	// Upsert creates n, or, when a node with the same (NodeType,
	// ExternalID) exists, replaces its payload and updated_at and returns
	// it. created reports which. A node without an ExternalID is always
	// created. Concurrent identical upserts yield one node.
	Upsert(ctx context.Context, n Node) (got Node, created bool, err error)
	// Get returns a node. ErrNotFound when there is none.
	Get(ctx context.Context, id string) (Node, error)
}

// Edges are the graph's edges. Nodes are never deleted, so a use case that
// found both endpoints may create an edge between them; the schema's
// foreign keys back that up.
type Edges interface {
	// Create stores e.
	Create(ctx context.Context, e Edge) error
	// List returns one page of the edges f selects, oldest first (by
	// created_at, then id), and how many match in all. A node that does
	// not exist simply has no edges.
	List(ctx context.Context, f EdgeFilter) ([]Edge, int, error)
}

// UsageSnapshots are the providers' usage snapshots.
type UsageSnapshots interface {
	// Add stores a snapshot.
	Add(ctx context.Context, s UsageSnapshot) error
	// Trim deletes the provider's snapshots but the keep most recent (by
	// collected_at, then created_at) and reports how many went.
	Trim(ctx context.Context, provider string, keep int) (int64, error)
	// Latest returns the most recent snapshot of each provider (by
	// collected_at, then created_at), ordered by provider.
	Latest(ctx context.Context) ([]UsageSnapshot, error)
}

// Checks are the economy monitor's recorded checks.
type Checks interface {
	// Insert records a check.
	Insert(ctx context.Context, r monitor.Record) error
	// Latest returns the newest check; ErrNotFound before the first.
	Latest(ctx context.Context) (monitor.Record, error)
	// Streak counts the failed checks since the newest completed one and
	// names the mode the newest check that knew or changed it left.
	Streak(ctx context.Context) (monitor.Streak, error)
	// Prune deletes the checks made before before and reports how many.
	Prune(ctx context.Context, before time.Time) (int64, error)
}
