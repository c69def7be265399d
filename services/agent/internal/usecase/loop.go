package usecase

import (
	"context"
	"errors"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/lease"
)

// LoopLease is the lease the pipeline loop's leader holds.
const LoopLease = "pipeline-loop"

// LoopRetention is how long the loop's passes are kept; the counts by
// outcome are kept for ever.
const LoopRetention = 7 * 24 * time.Hour

// RecordLoopPass stores a pass of the pipeline loop and its count in one
// transaction, and prunes passes older than LoopRetention.
func (a *App) RecordLoopPass(ctx context.Context, p store.LoopPass) error {
	if p.ID == "" {
		p.ID = a.cfg.NewID()
	}
	p.StartedAt, p.FinishedAt = p.StartedAt.UTC().Truncate(time.Microsecond), p.FinishedAt.UTC().Truncate(time.Microsecond)
	return wrap("record the loop pass", a.tx(ctx, func(r Repos) error {
		if err := r.Loop.Insert(ctx, p); err != nil {
			return err
		}
		_, err := r.Loop.Prune(ctx, a.now().Add(-LoopRetention))
		return err
	}))
}

// LoopReport is what the store knows of the pipeline loop, whichever
// replica ran it.
type LoopReport struct {
	// Latest is the newest pass; nil before the first.
	Latest *store.LoopPass
	// Counts are every pass ever made, by outcome.
	Counts map[string]int64
	// Leader holds the loop's lease now, by the database's clock ("" when
	// nobody does).
	Leader string
}

// Loop reads the loop's report.
func (a *App) Loop(ctx context.Context) (LoopReport, error) {
	r := a.read()
	var rep LoopReport
	latest, err := r.Loop.Latest(ctx)
	switch {
	case err == nil:
		rep.Latest = &latest
	case !errors.Is(err, store.ErrNotFound):
		return LoopReport{}, wrap("read the loop's last pass", err)
	}
	if rep.Counts, err = r.Loop.Counts(ctx); err != nil {
		return LoopReport{}, wrap("read the loop's counts", err)
	}
	if rep.Leader, err = lease.Current(ctx, a.db, LoopLease); err != nil {
		return LoopReport{}, wrap("read the loop's lease", err)
	}
	return rep, nil
}

// LeadLoop takes or renews the loop's lease for holder for ttl and
// reports whether holder has it. The lease expires by the database's
// clock, not the App's: replicas' clocks differ, the database's is the one
// they share (see the platform lease package).
func (a *App) LeadLoop(ctx context.Context, holder string, ttl time.Duration) (bool, error) {
	return lease.Take(ctx, a.db, LoopLease, holder, ttl)
}

// ReleaseLoop gives the loop's lease up when holder has it, so another
// replica takes over at once.
func (a *App) ReleaseLoop(ctx context.Context, holder string) error {
	return lease.Release(ctx, a.db, LoopLease, holder)
}
