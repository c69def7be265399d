package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/paging"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// UpsertNode implements OpsService.UpsertNode: 201 when the node is new, 200
// when (node_type, external_id) named an existing node, whose payload is
// then replaced.
func (h *Handler) UpsertNode(ctx context.Context, req *opsv1.UpsertNodeRequest) (*opsv1.UpsertNodeResponse, error) {
	in := usecase.UpsertNodeCmd{NodeType: req.GetNodeType(), Payload: structMap(req.GetPayload())}
	if req.ExternalId != nil {
		ext := req.GetExternalId()
		in.ExternalID = &ext
	}
	n, created, err := h.uc.UpsertNode(ctx, in)
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
// (at most graph.MaxLimit of them, oldest first, with the full count); 404
// when there is no such node.
func (h *Handler) GetNode(ctx context.Context, req *opsv1.GetNodeRequest) (*opsv1.GetNodeResponse, error) {
	v, err := h.uc.Node(ctx, req.GetNodeId())
	if err != nil {
		return nil, err
	}
	pb, err := nodePB(v.Node)
	if err != nil {
		return nil, err
	}
	out, err := edgesPB(v.Outgoing)
	if err != nil {
		return nil, err
	}
	return &opsv1.GetNodeResponse{
		Id: pb.GetId(), NodeType: pb.GetNodeType(), ExternalId: pb.GetExternalId(), Payload: pb.GetPayload(),
		CreatedAt: pb.GetCreatedAt(), UpdatedAt: pb.GetUpdatedAt(), OutgoingEdges: out, OutgoingEdgeCount: int64(v.OutgoingTotal),
	}, nil
}

// CreateEdge implements OpsService.CreateEdge: 201; 404 when an endpoint
// node does not exist.
func (h *Handler) CreateEdge(ctx context.Context, req *opsv1.CreateEdgeRequest) (*opsv1.CreateEdgeResponse, error) {
	e, err := h.uc.CreateEdge(ctx, usecase.CreateEdgeCmd{
		EdgeType: req.GetEdgeType(), FromNodeID: req.GetFromNodeId(), ToNodeID: req.GetToNodeId(),
		Weight: req.Weight, Payload: structMap(req.GetPayload()),
	})
	if err != nil {
		return nil, err
	}
	pb, err := edgePB(e)
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &opsv1.CreateEdgeResponse{Edge: pb}, nil
}

// ListNodeEdges implements OpsService.ListNodeEdges: 404 when there is no
// such node.
func (h *Handler) ListNodeEdges(ctx context.Context, req *opsv1.ListNodeEdgesRequest) (*opsv1.ListNodeEdgesResponse, error) {
	page, err := h.uc.NodeEdges(ctx, usecase.NodeEdgesCmd{
		NodeID: req.GetNodeId(), Direction: req.GetDirection(), EdgeType: req.GetEdgeType(), Limit: req.Limit, Offset: req.GetOffset(),
	})
	if err != nil {
		return nil, err
	}
	out, err := edgesPB(page.Edges)
	if err != nil {
		return nil, err
	}
	return &opsv1.ListNodeEdgesResponse{Edges: out, Pagination: paging.Of(page.Limit, page.Offset, page.Total, len(out), "")}, nil
}

// ListEdges implements OpsService.ListEdges.
func (h *Handler) ListEdges(ctx context.Context, req *opsv1.ListEdgesRequest) (*opsv1.ListEdgesResponse, error) {
	page, err := h.uc.Edges(ctx, usecase.EdgesCmd{
		EdgeType: req.GetEdgeType(), FromNodeID: req.GetFromNodeId(), ToNodeID: req.GetToNodeId(), Limit: req.Limit, Offset: req.GetOffset(),
	})
	if err != nil {
		return nil, err
	}
	out, err := edgesPB(page.Edges)
	if err != nil {
		return nil, err
	}
	return &opsv1.ListEdgesResponse{Edges: out, Pagination: paging.Of(page.Limit, page.Offset, page.Total, len(out), "")}, nil
}

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
		CreatedAt: wire.Time(n.CreatedAt), UpdatedAt: wire.Time(n.UpdatedAt),
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
		Weight: e.Weight, Payload: payload, CreatedAt: wire.Time(e.CreatedAt),
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
