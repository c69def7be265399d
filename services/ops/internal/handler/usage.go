package handler

import (
	"context"
	"net/http"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// GetAutomationUsage implements OpsService.GetAutomationUsage: every
// provider family's usage, collected live within the latency budget, from
// the stored snapshots otherwise.
func (h *Handler) GetAutomationUsage(ctx context.Context, _ *opsv1.GetAutomationUsageRequest) (*opsv1.GetAutomationUsageResponse, error) {
	rep, err := h.uc.AutomationUsage(ctx)
	if err != nil {
		return nil, err
	}
	resp := &opsv1.GetAutomationUsageResponse{Meta: &opsv1.UsageMeta{
		DataSource:        rep.Source,
		LatencyBudgetMs:   int32(rep.Budget / time.Millisecond),
		GeneratedAt:       wire.Time(rep.GeneratedAt),
		FallbackProviders: rep.Fallback,
	}}
	for _, r := range rep.Rows {
		resp.Providers = append(resp.Providers, providerUsagePB(r))
	}
	return resp, nil
}

func providerUsagePB(r usage.Row) *opsv1.ProviderUsage {
	out := &opsv1.ProviderUsage{
		Provider: r.Family, Variants: r.Variants, DataSource: r.Source, Alerts: []*opsv1.UsageAlert{},
	}
	if q := r.Quota; q != nil {
		out.UsageRemaining = wrapperspb.Double(wire.Amount(q.Remaining()))
		out.UsageLimit = wrapperspb.Double(*q.Metric.Limit)
		out.UsageUsed = wrapperspb.Double(q.Metric.Value)
		out.Unit = q.Metric.Unit
		out.PrimaryMetric = q.Metric.Name
	}
	if rec := r.Agent; rec != nil {
		out.AgentRecorded = &opsv1.AgentRecordedUsage{WindowDays: int32(rec.WindowDays), Tasks: rec.Tasks,
			TokensIn: float64(rec.TokensIn), TokensOut: float64(rec.TokensOut), CostUsd: rec.CostUSD}
		if r.Source == usage.SourceAgent {
			out.UsageUsed, out.Unit, out.PrimaryMetric = wrapperspb.Double(float64(rec.TokensIn+rec.TokensOut)), "tokens", "agent_recorded_tokens"
		}
	}
	if !r.CollectedAt.IsZero() {
		out.CollectedAt = wrapperspb.String(wire.Time(r.CollectedAt))
	}
	for _, a := range r.Alerts {
		out.Alerts = append(out.Alerts, &opsv1.UsageAlert{Level: a.Level, Message: a.Message})
	}
	return out
}

// IngestUsageSnapshot implements OpsService.IngestUsageSnapshot: an agent
// posts a provider's metrics; 201 with the stored snapshot.
func (h *Handler) IngestUsageSnapshot(ctx context.Context, req *opsv1.IngestUsageSnapshotRequest) (*opsv1.IngestUsageSnapshotResponse, error) {
	metrics := make([]usage.Metric, 0, len(req.GetMetrics()))
	for _, m := range req.GetMetrics() {
		um := usage.Metric{Name: m.GetName(), Value: m.GetValue(), Unit: m.GetUnit(), IsSummary: m.GetIsSummary()}
		if m.GetLimit() != nil {
			limit := m.GetLimit().GetValue()
			um.Limit = &limit
		}
		metrics = append(metrics, um)
	}
	snap, err := h.uc.IngestUsageSnapshot(ctx, usecase.IngestUsageCmd{Provider: req.GetProvider(), Metrics: metrics, CollectedAt: req.GetCollectedAt()})
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &opsv1.IngestUsageSnapshotResponse{Snapshot: snapshotPB(snap)}, nil
}

func snapshotPB(s store.UsageSnapshot) *opsv1.UsageSnapshot {
	out := &opsv1.UsageSnapshot{
		Id: s.ID, Provider: s.Provider, Family: s.Family, Metrics: []*opsv1.UsageMetric{},
		CollectedAt: wire.Time(s.CollectedAt), CreatedAt: wire.Time(s.CreatedAt),
	}
	for _, m := range s.Metrics {
		pm := &opsv1.UsageMetric{Name: m.Name, Value: m.Value, Unit: m.Unit, IsSummary: m.IsSummary}
		if m.Limit != nil {
			pm.Limit = wrapperspb.Double(*m.Limit)
		}
		out.Metrics = append(out.Metrics, pm)
	}
	return out
}
