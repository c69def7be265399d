// Package handler implements the ops service's gRPC API: readiness, the
// persistence report and runtime telemetry (this file), the graph layer
// (graph.go), automation usage (usage.go) and the economy monitor's report
// (coherence.go). It maps proto messages to the use cases and back, checks
// the caller's role and sets the HTTP status, and nothing more.
package handler

import (
	"context"

	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
)

// Handler serves foundry.ops.v1.OpsService and, for the gateway's
// telemetry, OpsInternalService.
type Handler struct {
	opsv1.UnimplementedOpsServiceServer
	opsinternalv1.UnimplementedOpsInternalServiceServer

	uc *usecase.App
}

// New returns a Handler over the use cases.
func New(uc *usecase.App) *Handler { return &Handler{uc: uc} }

// Ready implements OpsService.Ready: ready when the ops database answers and
// every peer serves and describes a database that answers now (a
// telemetry database is reported, never failing); 503 otherwise.
func (h *Handler) Ready(ctx context.Context, _ *opsv1.ReadyRequest) (*opsv1.ReadyResponse, error) {
	res, err := h.uc.Ready(ctx)
	if err != nil {
		return nil, err
	}
	resp := &opsv1.ReadyResponse{Status: "ready"}
	for _, r := range res.Checks {
		c := &opsv1.ReadinessCheck{Name: r.Name, Status: "ok"}
		if !r.OK {
			c.Status, c.Detail = "fail", r.Detail
		}
		resp.Checks = append(resp.Checks, c)
	}
	return resp, nil
}

// GetPersistence implements OpsService.GetPersistence: every service's
// backend and schema version and where telemetry goes, 200 whenever ops can
// answer. Only an administrator sees where the data lives; everyone else
// gets the public view, so probes and dashboards work without a
// credential.
func (h *Handler) GetPersistence(ctx context.Context, _ *opsv1.GetPersistenceRequest) (*opsv1.GetPersistenceResponse, error) {
	p, err := h.uc.Persistence(ctx, authz.FromContext(ctx).Is(authz.Admin))
	if err != nil {
		return nil, err
	}
	resp := &opsv1.GetPersistenceResponse{
		Status: p.Status, TargetsShown: p.TargetsShown,
		Telemetry: &opsv1.TelemetryPersistence{
			Backend: p.Telemetry.Backend, Target: p.Telemetry.Target, Status: p.Telemetry.Status, Detail: p.Telemetry.Detail,
		},
	}
	for _, s := range p.Services {
		resp.Services = append(resp.Services, &opsv1.ServicePersistence{
			Service: s.Service, Backend: s.Backend, SchemaVersion: int32(s.SchemaVersion),
			Status: s.Status, Detail: s.Detail, Target: s.Target, Schema: s.Schema,
		})
	}
	return resp, nil
}

// RecordEvents implements OpsService.RecordEvents: it stores a batch in the
// configured sink (accepted 0 and off when telemetry is off); 503 to the sender
// (the gateway's background sender) when the sink fails.
func (h *Handler) RecordEvents(ctx context.Context, req *opsinternalv1.RecordEventsRequest) (*opsinternalv1.RecordEventsResponse, error) {
	events := make([]usecase.RuntimeEvent, 0, len(req.GetEvents()))
	for _, e := range req.GetEvents() {
		events = append(events, usecase.RuntimeEvent{
			OccurredAt: e.GetOccurredAt(), Method: e.GetMethod(), Route: e.GetRoute(),
			Status: int(e.GetStatus()), DurationMS: e.GetDurationMs(),
		})
	}
	rec, err := h.uc.RecordEvents(ctx, usecase.RecordEventsCmd{Events: events})
	if err != nil {
		return nil, err
	}
	return &opsinternalv1.RecordEventsResponse{Accepted: int32(rec.Accepted), Off: rec.Off}, nil
}
