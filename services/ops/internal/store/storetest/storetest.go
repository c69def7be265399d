// Package storetest is the ops repositories' conformance suite: every
// engine's implementation must pass it. The repositories open no
// transactions, so the suite writes inside db.Tx as the use cases do; the
// use cases' own composite behaviour (an edge's endpoints, trimming a
// provider's history, recording and pruning checks) is tested in the
// usecase package, on every engine too. One file per repository: nodes.go,
// edges.go, usage.go, checks.go.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)

// Harness is what the suite runs against: an empty, migrated database and
// the constructors of the repositories over a querier.
type Harness struct {
	DB     *database.DB
	Nodes  func(q database.Querier) store.Nodes
	Edges  func(q database.Querier) store.Edges
	Usage  func(q database.Querier) store.UsageSnapshots
	Checks func(q database.Querier) store.Checks
}

// repos are the repositories over one querier.
type repos struct {
	nodes  store.Nodes
	edges  store.Edges
	usage  store.UsageSnapshots
	checks store.Checks
}

func (h Harness) over(q database.Querier) repos {
	return repos{nodes: h.Nodes(q), edges: h.Edges(q), usage: h.Usage(q), checks: h.Checks(q)}
}

// read returns the repositories over the pool.
func (h Harness) read() repos { return h.over(h.DB) }

// write runs fn in one transaction, as a use case does.
func (h Harness) write(fn func(r repos) error) error {
	return h.DB.Tx(context.Background(), func(q database.Querier) error { return fn(h.over(q)) })
}

// Run runs the suite; newHarness returns a harness over an empty database
// for one subtest.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("nodes", func(t *testing.T) { runNodes(t, newHarness) })
	t.Run("edges", func(t *testing.T) { runEdges(t, newHarness) })
	t.Run("usage", func(t *testing.T) { runUsage(t, newHarness) })
	t.Run("checks", func(t *testing.T) { runChecks(t, newHarness) })
}
