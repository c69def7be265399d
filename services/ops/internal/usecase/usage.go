package usecase

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/collector"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Snapshot sources.
const (
	SourceLive   = "live"
	SourceIngest = "ingest"
)

// SnapshotsKept is how many snapshots of one provider are kept; older ones
// are deleted as new ones arrive.
const SnapshotsKept = 100

// MaxClockSkew is how far in the future a posted collected_at may be: a
// snapshot from the future would stay "latest" until that time.
const MaxClockSkew = 5 * time.Minute

// liveStoreTimeout bounds storing one live collection in the background.
const liveStoreTimeout = 10 * time.Second

// AutomationUsageResult is the automation usage overview.
type AutomationUsageResult struct {
	// Rows are one per provider family, in usage.Families order.
	Rows []usage.Row
	// Source names where the overview's data came from (see usage.Overview).
	Source string
	// Budget is the latency budget of live collection.
	Budget time.Duration
	// GeneratedAt is when the report was asked for.
	GeneratedAt time.Time
	// Fallback names the families whose live collection missed the budget
	// or failed, sorted.
	Fallback []string
}

// AutomationUsage reports every provider family's usage. The stored
// snapshots are read while the collectors run, all under one deadline (the
// latency budget), so when the budget ends only assembling the answer is
// left: a stalled provider delays the answer by the budget, never more.
// Successful live collections are stored as snapshots in the background,
// off the response path (Close waits for them).
func (a *App) AutomationUsage(ctx context.Context) (AutomationUsageResult, error) {
	now := a.cfg.Clock.Now()
	budget := a.cfg.LatencyBudget
	deadline, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	stored := make(chan []store.UsageSnapshot, 1)
	go func() {
		snaps, err := a.unit.Read().Usage.Latest(deadline)
		if err != nil {
			a.log.Warn("usage: stored snapshots unavailable", zap.Error(err))
		}
		stored <- snaps
	}()
	recorded := make(chan []usage.ModelSpent, 1)
	go func() {
		if a.cfg.Agent == nil {
			recorded <- nil
			return
		}
		spent, err := a.cfg.Agent.Spent(deadline, AgentUsageDays)
		if err != nil {
			a.log.Warn("usage: the agent's recorded usage unavailable", zap.Error(err))
		}
		recorded <- spent
	}()

	results, missed := collector.Gather(deadline, budget, a.cfg.Collectors)
	live := map[string][]usage.Snapshot{}
	for _, r := range results {
		live[r.Family] = r.Snapshots
	}
	a.storeLive(results, now)
	for _, m := range missed {
		a.log.Warn("usage: live collection fell back to snapshots", zap.String("family", m.Family), zap.Error(m.Err))
	}

	in := usage.Input{Live: live, Fallback: collector.Families(missed), RecordedAt: now}
	for _, s := range awaitStored(deadline, stored, a.log) {
		in.Stored = append(in.Stored, s.Snapshot)
	}
	spent, ok := await(deadline, recorded)
	if !ok {
		a.log.Warn("usage: the agent's recorded usage not read within the latency budget")
	}
	in.Agent = usage.FoldModels(AgentUsageDays, spent)
	rows, source := usage.Overview(in)
	return AutomationUsageResult{Rows: rows, Source: source, Budget: budget, GeneratedAt: now, Fallback: collector.Families(missed)}, nil
}

// await is what ch answers, or false when the deadline passes first. An
// answer already there wins over a deadline that has also passed (select
// alone would pick between them at random).
func await[T any](deadline context.Context, ch <-chan T) (T, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
	}
	select {
	case v := <-ch:
		return v, true
	case <-deadline.Done():
		var zero T
		return zero, false
	}
}

// awaitStored returns the stored snapshots once read, or nothing when the
// deadline passes first.
func awaitStored(deadline context.Context, stored <-chan []store.UsageSnapshot, log *zap.Logger) []store.UsageSnapshot {
	snaps, ok := await(deadline, stored)
	if !ok {
		log.Warn("usage: stored snapshots not read within the latency budget")
	}
	return snaps
}

// storeLive keeps successful live collections as snapshots, in the
// background: the fallback of a later request. Close waits for it. A
// snapshot is stored once: the usage cache serves the same answer to every
// request within its TTL, and storing each of those would cost a write per
// request (the very load the cache exists to remove) and push distinct
// older snapshots out of the kept window. A snapshot is the same when its
// provider and collected_at are.
func (a *App) storeLive(results []collector.Result, now time.Time) {
	var fresh []store.UsageSnapshot
	a.storedMu.Lock()
	for _, r := range results {
		for _, s := range r.Snapshots {
			if last, ok := a.stored[s.Provider]; ok && last.Equal(s.CollectedAt) {
				continue
			}
			a.stored[s.Provider] = s.CollectedAt
			fresh = append(fresh, store.UsageSnapshot{
				Snapshot: s, ID: a.cfg.NewID(), Family: r.Family, Source: SourceLive, CreatedAt: now,
			})
		}
	}
	a.storedMu.Unlock()
	if len(fresh) == 0 {
		return
	}
	a.background.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), liveStoreTimeout)
		defer cancel()
		for _, s := range fresh {
			if err := a.addSnapshot(ctx, s); err != nil {
				a.usageStoreErr.Inc()
				a.log.Warn("usage: live collection not stored", zap.String("provider", s.Provider), zap.Error(err))
				a.forgetStored(s.Snapshot)
			}
		}
	})
}

// forgetStored lets a snapshot that could not be stored be tried again by
// the next request that sees it (unless a newer one was stored since).
func (a *App) forgetStored(s usage.Snapshot) {
	a.storedMu.Lock()
	defer a.storedMu.Unlock()
	if last, ok := a.stored[s.Provider]; ok && last.Equal(s.CollectedAt) {
		delete(a.stored, s.Provider)
	}
}

// addSnapshot stores a snapshot and trims its provider's history to the
// SnapshotsKept most recent, in one transaction.
func (a *App) addSnapshot(ctx context.Context, s store.UsageSnapshot) error {
	return a.unit.Tx(ctx, func(r Repos) error {
		if err := r.Usage.Add(ctx, s); err != nil {
			return err
		}
		_, err := r.Usage.Trim(ctx, s.Provider, SnapshotsKept)
		return err
	})
}

// IngestUsageCmd is an agent's report of a provider's metrics.
type IngestUsageCmd struct {
	// Provider is a family or one of its variants (claude-code).
	Provider string
	Metrics  []usage.Metric
	// CollectedAt is an RFC 3339 time, not more than MaxClockSkew ahead;
	// the time of receipt when empty.
	CollectedAt string
}

// IngestUsageSnapshot stores a provider's metrics as a snapshot under its
// normalised provider name and family.
func (a *App) IngestUsageSnapshot(ctx context.Context, in IngestUsageCmd) (store.UsageSnapshot, error) {
	var errs []fault.FieldError
	family, err := usage.Validate(in.Provider, in.Metrics)
	if err != nil {
		fe, ok := fault.As(err)
		if !ok {
			return store.UsageSnapshot{}, err
		}
		errs = append(errs, fe.Fields...)
	}
	now := a.now()
	at := now
	if in.CollectedAt != "" {
		t, err := wire.ParseTime(in.CollectedAt)
		switch {
		case err != nil:
			errs = append(errs, fault.Field("collected_at", "must be an RFC 3339 time"))
		case t.After(now.Add(MaxClockSkew)):
			errs = append(errs, fault.Field("collected_at", "must not be in the future"))
		default:
			at = t.UTC().Truncate(time.Microsecond)
		}
	}
	if len(errs) > 0 {
		return store.UsageSnapshot{}, fault.Validation(errs...)
	}
	snap := store.UsageSnapshot{
		Snapshot: usage.Snapshot{Provider: usage.NormalizeProvider(in.Provider), Metrics: in.Metrics, CollectedAt: at},
		ID:       a.cfg.NewID(), Family: family, Source: SourceIngest, CreatedAt: now,
	}
	if err := a.addSnapshot(ctx, snap); err != nil {
		return store.UsageSnapshot{}, wrap("store a usage snapshot", err)
	}
	return snap, nil
}
