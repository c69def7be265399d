// Package handler implements the ops service's gRPC API. RPCs whose
// milestone has not landed answer Unimplemented (HTTP 501) through the
// embedded base.
package handler

import (
	"context"
	"fmt"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/readiness"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// probeTimeout bounds each readiness probe, so a hung dependency makes
// readiness fail fast instead of hang.
const probeTimeout = 2 * time.Second

// Peer is a service whose gRPC health readiness depends on.
type Peer struct {
	// Name is the module name ("ledger").
	Name string
	// Service is the gRPC service name its health server reports.
	Service string
	Health  healthpb.HealthClient
}

// Handler serves foundry.ops.v1.OpsService.
type Handler struct {
	opsv1.UnimplementedOpsServiceServer

	db    *database.DB
	peers []Peer
}

// New returns a Handler over the ops database and the peers to probe.
func New(db *database.DB, peers []Peer) *Handler {
	return &Handler{db: db, peers: peers}
}

// Ready implements OpsService.Ready: ready when the ops database answers and
// every peer's health check says SERVING (each service's status already
// folds in its own database check).
func (h *Handler) Ready(ctx context.Context, _ *opsv1.ReadyRequest) (*opsv1.ReadyResponse, error) {
	probes := []readiness.Probe{{Name: "ops database", Check: h.db.Ping}}
	for _, p := range h.peers {
		probes = append(probes, readiness.Probe{Name: p.Name, Check: func(ctx context.Context) error {
			resp, err := p.Health.Check(ctx, &healthpb.HealthCheckRequest{Service: p.Service})
			if err != nil {
				return fmt.Errorf("unreachable")
			}
			if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				return fmt.Errorf("%s", resp.GetStatus())
			}
			return nil
		}})
	}
	results := readiness.Run(ctx, probes, probeTimeout)
	if failing := readiness.Failing(results); failing != "" {
		return nil, fault.New(fault.Unavailable, "not ready: %s", failing)
	}
	resp := &opsv1.ReadyResponse{Status: "ready"}
	for _, r := range results {
		resp.Checks = append(resp.Checks, &opsv1.ReadinessCheck{Name: r.Name, Status: "ok"})
	}
	return resp, nil
}
