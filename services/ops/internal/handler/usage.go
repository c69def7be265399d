package handler

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"google.golang.org/protobuf/types/known/wrapperspb"

	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/collector"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// Snapshot sources.
const (
	sourceLive   = "live"
	sourceIngest = "ingest"
)

// maxClockSkew is how far in the future a posted collected_at may be: a
// snapshot from the future would stay "latest" until that time.
const maxClockSkew = 5 * time.Minute

// liveStoreTimeout bounds storing one live collection in the background.
const liveStoreTimeout = 10 * time.Second

// GetAutomationUsage implements OpsService.GetAutomationUsage. The stored
// snapshots are read while the collectors run, all under one deadline (the
// latency budget), so when the budget ends only assembling the answer is
// left: a stalled provider delays the answer by the budget, never more.
// Successful live collections are stored as snapshots in the background,
// off the response path.
func (h *Handler) GetAutomationUsage(ctx context.Context, _ *opsv1.GetAutomationUsageRequest) (*opsv1.GetAutomationUsageResponse, error) {
	now := h.clock.Now()
	deadline, cancel := context.WithTimeout(ctx, h.budget)
	defer cancel()
	stored := make(chan []store.UsageSnapshot, 1)
	go func() {
		snaps, err := h.store.LatestUsageSnapshots(deadline)
		if err != nil {
			h.log.Warn("usage: stored snapshots unavailable", zap.Error(err))
		}
		stored <- snaps
	}()

	results, missed := collector.Gather(deadline, h.budget, h.collectors)
	live := map[string][]usage.Snapshot{}
	for _, r := range results {
		live[r.Family] = r.Snapshots
	}
	h.storeLive(results, now)
	for _, m := range missed {
		h.log.Warn("usage: live collection fell back to snapshots", zap.String("family", m.Family), zap.Error(m.Err))
	}

	in := usage.Input{Live: live, Fallback: collector.Families(missed)}
	for _, s := range awaitStored(deadline, stored, h.log) {
		in.Stored = append(in.Stored, s.Snapshot)
	}
	rows, source := usage.Overview(in)

	resp := &opsv1.GetAutomationUsageResponse{Meta: &opsv1.UsageMeta{
		DataSource:        source,
		LatencyBudgetMs:   int32(h.budget / time.Millisecond),
		GeneratedAt:       rfc3339(now),
		FallbackProviders: collector.Families(missed),
	}}
	for _, r := range rows {
		resp.Providers = append(resp.Providers, providerUsagePB(r))
	}
	return resp, nil
}

// awaitStored returns the stored snapshots once read, or nothing when the
// deadline passes first. A result already there wins over a deadline that
// has also passed (select alone would pick between them at random).
func awaitStored(deadline context.Context, stored <-chan []store.UsageSnapshot, log *zap.Logger) []store.UsageSnapshot {
	select {
	case snaps := <-stored:
		return snaps
	default:
	}
	select {
	case snaps := <-stored:
		return snaps
	case <-deadline.Done():
		log.Warn("usage: stored snapshots not read within the latency budget")
		return nil
	}
}

// storeLive keeps successful live collections as snapshots, in the
// background: the fallback of a later request. Close waits for it. A
// snapshot is stored once: the usage cache serves the same answer to every
// request within its TTL, and storing each of those would cost a write per
// request (the very load the cache exists to remove) and push distinct
// older snapshots out of the kept window. A snapshot is the same when its
// provider and collected_at are.
func (h *Handler) storeLive(results []collector.Result, now time.Time) {
	var fresh []store.UsageSnapshot
	h.storedMu.Lock()
	for _, r := range results {
		for _, s := range r.Snapshots {
			if last, ok := h.stored[s.Provider]; ok && last.Equal(s.CollectedAt) {
				continue
			}
			h.stored[s.Provider] = s.CollectedAt
			fresh = append(fresh, store.UsageSnapshot{
				Snapshot: s, ID: uuid.NewString(), Family: r.Family, Source: sourceLive, CreatedAt: now,
			})
		}
	}
	h.storedMu.Unlock()
	if len(fresh) == 0 {
		return
	}
	h.background.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), liveStoreTimeout)
		defer cancel()
		for _, s := range fresh {
			if err := h.store.AddUsageSnapshot(ctx, s); err != nil {
				h.usageStoreErr.Inc()
				h.log.Warn("usage: live collection not stored", zap.String("provider", s.Provider), zap.Error(err))
				h.forgetStored(s.Snapshot)
			}
		}
	})
}

// forgetStored lets a snapshot that could not be stored be tried again by
// the next request that sees it (unless a newer one was stored since).
func (h *Handler) forgetStored(s usage.Snapshot) {
	h.storedMu.Lock()
	defer h.storedMu.Unlock()
	if last, ok := h.stored[s.Provider]; ok && last.Equal(s.CollectedAt) {
		delete(h.stored, s.Provider)
	}
}

// Close waits for background work (storing live usage) to finish.
func (h *Handler) Close() { h.background.Wait() }

func providerUsagePB(r usage.Row) *opsv1.ProviderUsage {
	out := &opsv1.ProviderUsage{
		Provider: r.Family, Variants: r.Variants, DataSource: r.Source, Alerts: []*opsv1.UsageAlert{},
	}
	if q := r.Quota; q != nil {
		out.UsageRemaining = wrapperspb.Double(q.Remaining())
		out.UsageLimit = wrapperspb.Double(*q.Metric.Limit)
		out.UsageUsed = wrapperspb.Double(q.Metric.Value)
		out.Unit = q.Metric.Unit
		out.PrimaryMetric = q.Metric.Name
	}
	if !r.CollectedAt.IsZero() {
		out.CollectedAt = wrapperspb.String(rfc3339(r.CollectedAt))
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
	family, err := usage.Validate(req.GetProvider(), metrics)
	if err != nil {
		return nil, err
	}
	now := h.clock.Now().Truncate(time.Microsecond)
	at := now
	if req.GetCollectedAt() != "" {
		at, err = time.Parse(time.RFC3339Nano, req.GetCollectedAt())
		if err != nil {
			return nil, fault.Validation(fault.Field("collected_at", "must be an RFC 3339 time"))
		}
		if at.After(now.Add(maxClockSkew)) {
			return nil, fault.Validation(fault.Field("collected_at", "must not be in the future"))
		}
		at = at.UTC().Truncate(time.Microsecond)
	}
	snap := store.UsageSnapshot{
		Snapshot: usage.Snapshot{Provider: usage.NormalizeProvider(req.GetProvider()), Metrics: metrics, CollectedAt: at},
		ID:       uuid.NewString(), Family: family, Source: sourceIngest, CreatedAt: now,
	}
	if err := h.store.AddUsageSnapshot(ctx, snap); err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &opsv1.IngestUsageSnapshotResponse{Snapshot: snapshotPB(snap)}, nil
}

func snapshotPB(s store.UsageSnapshot) *opsv1.UsageSnapshot {
	out := &opsv1.UsageSnapshot{
		Id: s.ID, Provider: s.Provider, Family: s.Family, Metrics: []*opsv1.UsageMetric{},
		CollectedAt: rfc3339(s.CollectedAt), CreatedAt: rfc3339(s.CreatedAt),
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
