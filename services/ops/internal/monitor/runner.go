package monitor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/lease"
	"github.com/foundryhq/foundry/services/platform/periodic"
)

// Ledger is what the monitor needs of the ledger (its gRPC API, adapted).
type Ledger interface {
	// Check asks the ledger to check itself.
	Check(ctx context.Context) (Check, error)
	// SetMode applies a mode; it reports the mode in force afterwards.
	SetMode(ctx context.Context, mode, reason string) (string, error)
}

// Record is one check as stored.
type Record struct {
	ID        string
	CheckedAt time.Time
	Holder    string
	Check     Check
	// Mismatched is len(Check.Mismatched) as stored (the names are not kept).
	Mismatched int
	Decision   Decision
	// Applied is true when the ledger's mode was changed.
	Applied bool
	// Error is what went wrong ("" for a completed check).
	Error string
}

// ErrNoCheck is returned by Latest before the first check.
var ErrNoCheck = errors.New("no monitor check yet")

// Recorder stores checks.
type Recorder interface {
	Insert(ctx context.Context, r Record) error
	Latest(ctx context.Context) (Record, error)
	Prune(ctx context.Context, before time.Time) (int64, error)
}

// LeaseName is the lease the monitor's leader holds.
const LeaseName = "economy-monitor"

// Retention is how long checks are kept.
const Retention = 7 * 24 * time.Hour

// Runner runs the monitor on whichever replica holds the lease.
type Runner struct {
	DB       *database.DB
	Recorder func(q database.Querier) Recorder
	Ledger   Ledger
	// Holder names this replica (unique per process).
	Holder   string
	Interval time.Duration
	Clock    clock.Clock
	NewID    func() string
	Log      *zap.Logger
}

// Run checks every Interval while this replica leads, until ctx ends. The
// lease lasts three intervals, so a leader that dies is replaced within
// about three intervals; a leader that stops cleanly releases it at once.
func (r *Runner) Run(ctx context.Context) {
	defer func() {
		_ = lease.Release(context.WithoutCancel(ctx), r.DB, LeaseName, r.Holder)
	}()
	leading := false
	periodic.Run(ctx, r.Interval, func() {
		ok, err := lease.Take(ctx, r.DB, LeaseName, r.Holder, 3*r.Interval)
		switch {
		case err != nil && ctx.Err() == nil:
			r.Log.Warn("economy monitor: lease", zap.Error(err))
		case ok && !leading:
			r.Log.Info("economy monitor: this replica leads", zap.String("holder", r.Holder))
		case !ok && leading:
			r.Log.Info("economy monitor: another replica leads now")
		}
		leading = ok && err == nil
		if leading {
			if _, err := r.Once(ctx, true); err != nil && ctx.Err() == nil {
				r.Log.Warn("economy monitor: check failed", zap.Error(err))
			}
		}
	})
}

// Once runs one check: asks the ledger, decides, applies the decision when
// apply is set (the leader) and records the check. A check that could not
// reach the ledger is recorded with its error and returned.
func (r *Runner) Once(ctx context.Context, apply bool) (Record, error) {
	rec := Record{ID: r.NewID(), CheckedAt: r.Clock.Now().UTC().Truncate(time.Microsecond), Holder: r.Holder}
	cctx, cancel := context.WithTimeout(ctx, max(r.Interval, 10*time.Second))
	defer cancel()
	chk, err := r.Ledger.Check(cctx)
	if err != nil {
		rec.Error = err.Error()
		rec.Decision = Decision{Mode: "unknown", Reasons: []string{"the ledger could not be checked"}}
		if apply {
			_ = r.Recorder(r.DB).Insert(ctx, rec)
		}
		return rec, fmt.Errorf("check the ledger: %w", err)
	}
	rec.Check, rec.Mismatched = chk, len(chk.Mismatched)
	rec.Decision = Decide(chk)
	if !apply {
		return rec, nil
	}
	if mode, change := Apply(chk.Mode, rec.Decision); change {
		if _, err := r.Ledger.SetMode(cctx, mode, rec.Decision.Reason()); err != nil {
			rec.Error = "apply " + mode + ": " + err.Error()
		} else {
			rec.Applied = true
			r.Log.Warn("economy monitor: mode changed", zap.String("from", chk.Mode), zap.String("to", mode),
				zap.String("reason", rec.Decision.Reason()), zap.Int("score", rec.Decision.Score))
		}
	}
	repo := r.Recorder(r.DB)
	if err := repo.Insert(ctx, rec); err != nil {
		return rec, err
	}
	if _, err := repo.Prune(ctx, rec.CheckedAt.Add(-Retention)); err != nil {
		return rec, err
	}
	return rec, nil
}

// Latest returns the newest check and says where it came from: the
// leader's record ("monitor") when there is one from the last two
// intervals, otherwise a check run now that changes nothing ("live").
func (r *Runner) Latest(ctx context.Context) (Record, string, error) {
	rec, err := r.Recorder(r.DB).Latest(ctx)
	switch {
	case err == nil && rec.Error == "" && r.Interval > 0 && r.Clock.Now().Sub(rec.CheckedAt) <= 2*r.Interval:
		return rec, "monitor", nil
	case err != nil && !errors.Is(err, ErrNoCheck):
		return Record{}, "", err
	}
	rec, err = r.Once(ctx, false)
	return rec, "live", err
}
