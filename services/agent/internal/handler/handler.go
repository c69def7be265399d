// Package handler implements the agent service's gRPC API. RPCs whose
// milestone has not landed answer Unimplemented (HTTP 501) through the
// embedded base.
package handler

import (
	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Handler serves foundry.agent.v1.AgentService.
type Handler struct {
	agentv1.UnimplementedAgentServiceServer

	db *database.DB
}

// New returns a Handler over the service's database.
func New(db *database.DB) *Handler { return &Handler{db: db} }
