// Package agent is the agent service as a module, on its own schema.
package agent

import (
	"context"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/agent/internal/handler"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/app"
)

// Module returns the agent module.
func Module() app.Module {
	return app.Module{
		Name:       "agent",
		Service:    agentv1.AgentService_ServiceDesc.ServiceName,
		Migrations: store.Migrations(),
		Start: func(_ context.Context, h *app.Host) error {
			h.RegisterService(&agentv1.AgentService_ServiceDesc, handler.New(h.DB))
			return nil
		},
	}
}
