package usecase

import (
	"context"
	"errors"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// CreateEdgeCmd is a request for a typed, directed edge between two nodes.
type CreateEdgeCmd struct {
	EdgeType   string
	FromNodeID string
	ToNodeID   string
	// Weight is graph.DefaultWeight when nil.
	Weight *float64
	// Payload is the edge's JSON object ({} when nil).
	Payload map[string]any
}

// CreateEdge stores an edge between two existing nodes, their ids in
// canonical form; fault.NotFound naming the field when an endpoint node
// does not exist. Nodes are never deleted, so finding both endpoints in
// the transaction before the insert is enough.
func (a *App) CreateEdge(ctx context.Context, in CreateEdgeCmd) (store.Edge, error) {
	errs := graph.CheckType("edge_type", in.EdgeType)
	from, ferrs := graph.ParseID("from_node_id", in.FromNodeID)
	to, terrs := graph.ParseID("to_node_id", in.ToNodeID)
	weight, werrs := graph.Weight(in.Weight)
	payload, perrs := graph.Payload("payload", in.Payload, false)
	for _, more := range [][]fault.FieldError{ferrs, terrs, werrs, perrs} {
		errs = append(errs, more...)
	}
	if len(errs) > 0 {
		return store.Edge{}, fault.Validation(errs...)
	}
	e := store.Edge{
		ID: a.cfg.NewID(), EdgeType: in.EdgeType, FromNodeID: from, ToNodeID: to,
		Weight: weight, Payload: payload, CreatedAt: a.now(),
	}
	err := a.unit.Tx(ctx, func(r Repos) error {
		for _, end := range []struct{ field, id string }{{"from_node_id", from}, {"to_node_id", to}} {
			_, err := r.Nodes.Get(ctx, end.id)
			switch {
			case errors.Is(err, store.ErrNotFound):
				return fault.New(fault.NotFound, "%s: node %s not found", end.field, end.id)
			case err != nil:
				return err
			}
		}
		return r.Edges.Create(ctx, e)
	})
	if _, ok := fault.As(err); ok {
		return store.Edge{}, err
	}
	if err != nil {
		return store.Edge{}, wrap("create an edge", err)
	}
	return e, nil
}

// EdgesResult is one page of edges.
type EdgesResult struct {
	Edges []store.Edge
	// Total counts every edge the query selects.
	Total  int
	Limit  int
	Offset int
}

// NodeEdgesCmd selects the edges touching a node.
type NodeEdgesCmd struct {
	NodeID string
	// Direction is outgoing, incoming or both (empty: both; out and in
	// are short forms).
	Direction string
	// EdgeType, when not empty, keeps the edges of that type.
	EdgeType string
	// Limit is graph.DefaultLimit when nil, else 1..graph.MaxLimit.
	Limit  *int32
	Offset int32
}

// NodeEdges lists the edges touching a node, oldest first; fault.NotFound
// when there is no such node.
func (a *App) NodeEdges(ctx context.Context, q NodeEdgesCmd) (EdgesResult, error) {
	id, errs := graph.ParseID("node_id", q.NodeID)
	dir, derr := graph.ParseDirection(q.Direction)
	if fe, ok := fault.As(derr); ok {
		errs = append(errs, fe.Fields...)
	}
	errs = append(errs, optionalType("edge_type", q.EdgeType)...)
	limit, offset, perrs := graph.Page(q.Limit, q.Offset)
	if errs = append(errs, perrs...); len(errs) > 0 {
		return EdgesResult{}, fault.Validation(errs...)
	}
	r := a.unit.Read()
	if _, err := r.Nodes.Get(ctx, id); err != nil {
		return EdgesResult{}, nodeNotFound(err, id)
	}
	edges, total, err := r.Edges.List(ctx, store.EdgeFilter{
		Node: id, Direction: dir, EdgeType: q.EdgeType, Limit: limit, Offset: offset,
	})
	if err != nil {
		return EdgesResult{}, wrap("list a node's edges", err)
	}
	return EdgesResult{Edges: edges, Total: total, Limit: limit, Offset: offset}, nil
}

// EdgesCmd selects edges by type and endpoints; empty fields do not
// filter.
type EdgesCmd struct {
	EdgeType   string
	FromNodeID string
	ToNodeID   string
	// Limit is graph.DefaultLimit when nil, else 1..graph.MaxLimit.
	Limit  *int32
	Offset int32
}

// Edges lists the edges q selects, oldest first.
func (a *App) Edges(ctx context.Context, q EdgesCmd) (EdgesResult, error) {
	errs := optionalType("edge_type", q.EdgeType)
	from, ferrs := graph.ParseOptionalID("from_node_id", q.FromNodeID)
	to, terrs := graph.ParseOptionalID("to_node_id", q.ToNodeID)
	limit, offset, perrs := graph.Page(q.Limit, q.Offset)
	for _, more := range [][]fault.FieldError{ferrs, terrs, perrs} {
		errs = append(errs, more...)
	}
	if len(errs) > 0 {
		return EdgesResult{}, fault.Validation(errs...)
	}
	edges, total, err := a.unit.Read().Edges.List(ctx, store.EdgeFilter{
		EdgeType: q.EdgeType, FromNodeID: from, ToNodeID: to, Limit: limit, Offset: offset,
	})
	if err != nil {
		return EdgesResult{}, wrap("list edges", err)
	}
	return EdgesResult{Edges: edges, Total: total, Limit: limit, Offset: offset}, nil
}

// optionalType validates a type filter: empty means no filter.
func optionalType(field, v string) []fault.FieldError {
	if v == "" {
		return nil
	}
	return graph.CheckType(field, v)
}
