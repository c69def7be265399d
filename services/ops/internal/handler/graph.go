package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// UpsertNode implements OpsService.UpsertNode: 201 when the node is new, 200
// when (node_type, external_id) named an existing node, whose payload is
// then replaced.
func (h *Handler) UpsertNode(ctx context.Context, req *opsv1.UpsertNodeRequest) (*opsv1.UpsertNodeResponse, error) {
	errs := graph.CheckType("node_type", req.GetNodeType())
	if req.ExternalId != nil {
		errs = append(errs, graph.CheckExternalID(req.GetExternalId())...)
	}
	payload, perrs := graph.Payload("payload", structMap(req.GetPayload()), true)
	if errs = append(errs, perrs...); len(errs) > 0 {
		return nil, fault.Validation(errs...)
	}
	now := h.clock.Now().Truncate(time.Microsecond) // what the store keeps
	n, created, err := h.store.UpsertNode(ctx, store.Node{
		ID: uuid.NewString(), NodeType: req.GetNodeType(), ExternalID: req.GetExternalId(),
		Payload: payload, CreatedAt: now, UpdatedAt: now,
	})
	if err != nil {
		return nil, err
	}
	pb, err := nodePB(n)
	if err != nil {
		return nil, err
	}
	if created {
		rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	}
	return &opsv1.UpsertNodeResponse{Node: pb, Created: created}, nil
}

// GetNode implements OpsService.GetNode: the node and its outgoing edges
// (at most graph.MaxLimit of them, oldest first, with the full count).
func (h *Handler) GetNode(ctx context.Context, req *opsv1.GetNodeRequest) (*opsv1.GetNodeResponse, error) {
	id, errs := graph.ParseID("node_id", req.GetNodeId())
	if len(errs) > 0 {
		return nil, fault.Validation(errs...)
	}
	n, err := h.store.Node(ctx, id)
	if err != nil {
		return nil, notFound(err, id)
	}
	edges, total, err := h.store.Edges(ctx, store.EdgeFilter{Node: id, Direction: graph.Outgoing, Limit: graph.MaxLimit})
	if err != nil {
		return nil, notFound(err, id)
	}
	pb, err := nodePB(n)
	if err != nil {
		return nil, err
	}
	out, err := edgesPB(edges)
	if err != nil {
		return nil, err
	}
	return &opsv1.GetNodeResponse{
		Id: pb.GetId(), NodeType: pb.GetNodeType(), ExternalId: pb.GetExternalId(), Payload: pb.GetPayload(),
		CreatedAt: pb.GetCreatedAt(), UpdatedAt: pb.GetUpdatedAt(), OutgoingEdges: out, OutgoingEdgeCount: int32(total),
	}, nil
}

// CreateEdge implements OpsService.CreateEdge: 201; 404 when an endpoint
// node does not exist.
func (h *Handler) CreateEdge(ctx context.Context, req *opsv1.CreateEdgeRequest) (*opsv1.CreateEdgeResponse, error) {
	errs := graph.CheckType("edge_type", req.GetEdgeType())
	from, ferrs := graph.ParseID("from_node_id", req.GetFromNodeId())
	to, terrs := graph.ParseID("to_node_id", req.GetToNodeId())
	weight, werrs := graph.Weight(req.Weight)
	payload, perrs := graph.Payload("payload", structMap(req.GetPayload()), false)
	for _, more := range [][]fault.FieldError{ferrs, terrs, werrs, perrs} {
		errs = append(errs, more...)
	}
	if len(errs) > 0 {
		return nil, fault.Validation(errs...)
	}
	e := store.Edge{
		ID: uuid.NewString(), EdgeType: req.GetEdgeType(), FromNodeID: from, ToNodeID: to,
		Weight: weight, Payload: payload, CreatedAt: h.clock.Now().Truncate(time.Microsecond),
	}
	if err := h.store.CreateEdge(ctx, e); err != nil {
		var ee *store.EndpointError
		if errors.As(err, &ee) {
			return nil, fault.New(fault.NotFound, "%s: node %s not found", ee.Field, ee.NodeID)
		}
		return nil, err
	}
	pb, err := edgePB(e)
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &opsv1.CreateEdgeResponse{Edge: pb}, nil
}

// ListNodeEdges implements OpsService.ListNodeEdges.
func (h *Handler) ListNodeEdges(ctx context.Context, req *opsv1.ListNodeEdgesRequest) (*opsv1.ListNodeEdgesResponse, error) {
	id, errs := graph.ParseID("node_id", req.GetNodeId())
	dir, derr := graph.ParseDirection(req.GetDirection())
	if fe, ok := fault.As(derr); ok {
		errs = append(errs, fe.Fields...)
	}
	errs = append(errs, optionalType("edge_type", req.GetEdgeType())...)
	limit, offset, perrs := graph.Page(req.Limit, req.GetOffset())
	if errs = append(errs, perrs...); len(errs) > 0 {
		return nil, fault.Validation(errs...)
	}
	edges, total, err := h.store.Edges(ctx, store.EdgeFilter{
		Node: id, Direction: dir, EdgeType: req.GetEdgeType(), Limit: limit, Offset: offset,
	})
	if err != nil {
		return nil, notFound(err, id)
	}
	out, err := edgesPB(edges)
	if err != nil {
		return nil, err
	}
	return &opsv1.ListNodeEdgesResponse{Edges: out, Total: int32(total), Limit: int32(limit), Offset: int32(offset)}, nil
}

// ListEdges implements OpsService.ListEdges.
func (h *Handler) ListEdges(ctx context.Context, req *opsv1.ListEdgesRequest) (*opsv1.ListEdgesResponse, error) {
	errs := optionalType("edge_type", req.GetEdgeType())
	from, ferrs := graph.ParseOptionalID("from_node_id", req.GetFromNodeId())
	to, terrs := graph.ParseOptionalID("to_node_id", req.GetToNodeId())
	limit, offset, perrs := graph.Page(req.Limit, req.GetOffset())
	for _, more := range [][]fault.FieldError{ferrs, terrs, perrs} {
		errs = append(errs, more...)
	}
	if len(errs) > 0 {
		return nil, fault.Validation(errs...)
	}
	edges, total, err := h.store.Edges(ctx, store.EdgeFilter{
		EdgeType: req.GetEdgeType(), FromNodeID: from, ToNodeID: to, Limit: limit, Offset: offset,
	})
	if err != nil {
		return nil, err
	}
	out, err := edgesPB(edges)
	if err != nil {
		return nil, err
	}
	return &opsv1.ListEdgesResponse{Edges: out, Total: int32(total), Limit: int32(limit), Offset: int32(offset)}, nil
}

// optionalType validates a type filter: empty means no filter.
func optionalType(field, v string) []fault.FieldError {
	if v == "" {
		return nil
	}
	return graph.CheckType(field, v)
}

// notFound maps the store's ErrNotFound for a node to a 404.
func notFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return fault.New(fault.NotFound, "node %s not found", id)
	}
	return err
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// structMap is a request payload as a map; nil when absent (or JSON null).
func structMap(s *structpb.Struct) map[string]any {
	if s == nil {
		return nil
	}
	return s.AsMap()
}

// payloadPB decodes a stored payload.
func payloadPB(raw string) (*structpb.Struct, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("decode stored payload: %w", err)
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil, fmt.Errorf("decode stored payload: %w", err)
	}
	return s, nil
}

func nodePB(n store.Node) (*opsv1.Node, error) {
	payload, err := payloadPB(n.Payload)
	if err != nil {
		return nil, err
	}
	out := &opsv1.Node{
		Id: n.ID, NodeType: n.NodeType, Payload: payload,
		CreatedAt: rfc3339(n.CreatedAt), UpdatedAt: rfc3339(n.UpdatedAt),
	}
	if n.ExternalID != "" {
		out.ExternalId = wrapperspb.String(n.ExternalID)
	}
	return out, nil
}

func edgePB(e store.Edge) (*opsv1.Edge, error) {
	payload, err := payloadPB(e.Payload)
	if err != nil {
		return nil, err
	}
	return &opsv1.Edge{
		Id: e.ID, EdgeType: e.EdgeType, FromNodeId: e.FromNodeID, ToNodeId: e.ToNodeID,
		Weight: e.Weight, Payload: payload, CreatedAt: rfc3339(e.CreatedAt),
	}, nil
}

func edgesPB(es []store.Edge) ([]*opsv1.Edge, error) {
	out := make([]*opsv1.Edge, 0, len(es))
	for _, e := range es {
		pb, err := edgePB(e)
		if err != nil {
			return nil, err
		}
		out = append(out, pb)
	}
	return out, nil
}
