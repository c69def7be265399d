package peer

import (
	"context"

	"google.golang.org/grpc"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
)

// Agent is the agent service as the usage overview reads it: its
// metrics' usage by model, through its gRPC API.
type Agent struct {
	client agentv1.AgentServiceClient
}

var _ usecase.AgentUsage = Agent{}

// NewAgent returns the adapter over a connection to the agent.
func NewAgent(conn grpc.ClientConnInterface) Agent {
	return Agent{client: agentv1.NewAgentServiceClient(conn)}
}

// Spent implements usecase.AgentUsage.
func (a Agent) Spent(ctx context.Context, days int) ([]usage.ModelSpent, error) {
	n := int32(days)
	resp, err := a.client.GetMetrics(ctx, &agentv1.GetMetricsRequest{WindowDays: &n})
	if err != nil {
		return nil, err
	}
	out := make([]usage.ModelSpent, 0, len(resp.GetUsage().GetUsageByModel()))
	for model, u := range resp.GetUsage().GetUsageByModel() {
		out = append(out, usage.ModelSpent{Model: model, Recorded: usage.Recorded{Tasks: u.GetTasks(),
			TokensIn: int64(u.GetTokensIn()), TokensOut: int64(u.GetTokensOut()), CostUSD: u.GetCostUsd()}})
	}
	return out, nil
}
