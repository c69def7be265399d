// Package ops is the ops service as a module: readiness, persistence and
// telemetry, the graph layer and automation usage, on its own schema.
package ops

import (
	"context"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/ops/internal/handler"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/app"
)

// peerServices are the services readiness probes, by module name.
var peerServices = []struct{ name, service string }{
	{"portfolio", portfoliov1.PortfolioService_ServiceDesc.ServiceName},
	{"ledger", ledgerv1.LedgerService_ServiceDesc.ServiceName},
	{"agent", agentv1.AgentService_ServiceDesc.ServiceName},
}

// Module returns the ops module.
func Module() app.Module {
	return app.Module{
		Name:       "ops",
		Service:    opsv1.OpsService_ServiceDesc.ServiceName,
		Migrations: store.Migrations(),
		Start: func(_ context.Context, h *app.Host) error {
			var peers []handler.Peer
			for _, p := range peerServices {
				conn, err := h.Dial(p.name)
				if err != nil {
					return err
				}
				peers = append(peers, handler.Peer{Name: p.name, Service: p.service, Health: healthpb.NewHealthClient(conn)})
			}
			h.RegisterService(&opsv1.OpsService_ServiceDesc, handler.New(h.DB, peers))
			return nil
		},
	}
}
