package usecase

import (
	"context"
	"errors"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// UpsertNodeCmd is an upsert request for a graph node.
type UpsertNodeCmd struct {
	NodeType string
	// ExternalID, when not nil, names the node with NodeType: a second
	// upsert with the same pair updates the node. It must not be empty
	// then; nil makes a node without one (always a new node).
	ExternalID *string
	// Payload is the node's JSON object (required).
	Payload map[string]any
}

// UpsertNode creates a node, or, when (node_type, external_id) names an
// existing node, replaces its payload. created reports which.
func (a *App) UpsertNode(ctx context.Context, in UpsertNodeCmd) (n store.Node, created bool, err error) {
	errs := graph.CheckType("node_type", in.NodeType)
	if in.ExternalID != nil {
		errs = append(errs, graph.CheckExternalID(*in.ExternalID)...)
	}
	payload, perrs := graph.Payload("payload", in.Payload, true)
	if errs = append(errs, perrs...); len(errs) > 0 {
		return store.Node{}, false, fault.Validation(errs...)
	}
	ext := ""
	if in.ExternalID != nil {
		ext = *in.ExternalID
	}
	now := a.now()
	err = a.unit.Tx(ctx, func(r Repos) error {
		var err error
		n, created, err = r.Nodes.Upsert(ctx, store.Node{
			ID: a.cfg.NewID(), NodeType: in.NodeType, ExternalID: ext, Payload: payload, CreatedAt: now, UpdatedAt: now,
		})
		return err
	})
	if err != nil {
		return store.Node{}, false, wrap("upsert a node", err)
	}
	return n, created, nil
}

// NodeResult is a node with its outgoing edges.
type NodeResult struct {
	Node store.Node
	// Outgoing are its first graph.MaxLimit outgoing edges, oldest first.
	Outgoing []store.Edge
	// OutgoingTotal counts all its outgoing edges.
	OutgoingTotal int
}

// Node returns a node and its outgoing edges (at most graph.MaxLimit of
// them, oldest first, with the full count); fault.NotFound when there is
// no such node.
func (a *App) Node(ctx context.Context, nodeID string) (NodeResult, error) {
	id, errs := graph.ParseID("node_id", nodeID)
	if len(errs) > 0 {
		return NodeResult{}, fault.Validation(errs...)
	}
	r := a.unit.Read()
	n, err := r.Nodes.Get(ctx, id)
	if err != nil {
		return NodeResult{}, nodeNotFound(err, id)
	}
	edges, total, err := r.Edges.List(ctx, store.EdgeFilter{Node: id, Direction: graph.Outgoing, Limit: graph.MaxLimit})
	if err != nil {
		return NodeResult{}, wrap("list a node's edges", err)
	}
	return NodeResult{Node: n, Outgoing: edges, OutgoingTotal: total}, nil
}

// nodeNotFound maps the store's ErrNotFound for node id to a 404.
func nodeNotFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return fault.New(fault.NotFound, "node %s not found", id)
	}
	return wrap("find a node", err)
}
