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
	// Failed is how many checks in a row failed, this one included (0 for
	// a completed check); not stored, it is counted from the records.
	Failed int
}

// Streak is what the recorded checks say since the newest completed one.
type Streak struct {
	// Failed is how many checks failed after the newest completed one.
	Failed int
	// LastMode is the mode the newest completed check left the economy in
	// ("" before the first).
	LastMode string
}

// ErrNoCheck is returned by Latest before the first check.
var ErrNoCheck = errors.New("no monitor check yet")

// Recorder stores checks.
type Recorder interface {
	Insert(ctx context.Context, r Record) error
	Latest(ctx context.Context) (Record, error)
	// Streak counts the failed checks since the newest completed one.
	Streak(ctx context.Context) (Streak, error)
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
	// EscalateAfter is how many failed checks in a row raise the economy
	// to warning (monitor.EscalateAfter when zero).
	EscalateAfter int
	// Timeout bounds one check of the ledger (the longer of Interval and
	// 10 s when zero).
	Timeout time.Duration
}

// errCheckFailed marks Once's error for a check that could not be
// completed, which Once has logged already.
var errCheckFailed = errors.New("the ledger could not be checked")

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
			if _, err := r.Once(ctx, true); err != nil && ctx.Err() == nil && !errors.Is(err, errCheckFailed) {
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
	cctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	chk, err := r.Ledger.Check(cctx)
	if err != nil {
		if ctx.Err() != nil {
			// Shutting down: not a failed check.
			return rec, err
		}
		return r.failed(ctx, rec, apply, err, cctx.Err() != nil)
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

// failed handles a check that could not be completed, so the monitor
// never goes quiet (fails open) when it cannot see: the leader (apply)
// counts it with the failed checks recorded since the last completed one,
// records it with its decision (DecideFailed: unknown, then warning), asks
// the ledger for warning once the count reaches the threshold and the
// economy was in a milder mode, and logs it at error level every time.
// timedOut says the check outlived the monitor's timeout.
func (r *Runner) failed(ctx context.Context, rec Record, apply bool, err error, timedOut bool) (Record, error) {
	cause := err.Error()
	if timedOut {
		cause = fmt.Sprintf("timed out after %s", r.timeout())
	}
	rec.Error = err.Error()
	rec.Failed = 1
	if !apply {
		rec.Decision = DecideFailed(rec.Failed, r.EscalateAfter, cause)
		return rec, fmt.Errorf("check the ledger: %w: %w", errCheckFailed, err)
	}
	repo := r.Recorder(r.DB)
	streak, serr := repo.Streak(ctx)
	if serr != nil {
		// Counted as the first: the failure is still recorded and logged.
		r.Log.Warn("economy monitor: count failed checks", zap.Error(serr))
	}
	rec.Failed = streak.Failed + 1
	rec.Decision = DecideFailed(rec.Failed, r.EscalateAfter, cause)
	// Only a milder mode is raised: the graded modes are set by this
	// monitor after a completed check (so LastMode knows them) and the
	// ledger never lifts a freeze, so warning never lowers anything.
	if rec.Decision.Mode == Warning && rank[streak.LastMode] < rank[Warning] {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if mode, err := r.Ledger.SetMode(sctx, Warning, rec.Decision.Reason()); err != nil {
			rec.Error += "; apply " + Warning + ": " + err.Error()
		} else {
			rec.Applied = mode == Warning
		}
	}
	r.Log.Error("economy monitor: the ledger could not be checked", zap.Error(err), zap.Bool("timed_out", timedOut),
		zap.Int("failed_in_a_row", rec.Failed), zap.String("decided_mode", rec.Decision.Mode), zap.Bool("applied", rec.Applied))
	if ierr := repo.Insert(ctx, rec); ierr != nil {
		return rec, ierr
	}
	return rec, fmt.Errorf("check the ledger: %w: %w", errCheckFailed, err)
}

// timeout bounds one check of the ledger.
func (r *Runner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return max(r.Interval, 10*time.Second)
}

// Latest returns the newest check and says where it came from: the
// leader's record ("monitor") when there is one from the last two
// intervals, failed or not (a failing leader's record says how long the
// ledger has been unchecked, and a live check would most likely fail the
// same way), otherwise a check run now that changes nothing ("live"). A
// live check that fails is returned as a failed record, not an error.
func (r *Runner) Latest(ctx context.Context) (Record, string, error) {
	rec, err := r.Recorder(r.DB).Latest(ctx)
	switch {
	case err == nil && r.Interval > 0 && r.Clock.Now().Sub(rec.CheckedAt) <= 2*r.Interval:
		return rec, "monitor", nil
	case err != nil && !errors.Is(err, ErrNoCheck):
		return Record{}, "", err
	}
	rec, err = r.Once(ctx, false)
	if errors.Is(err, errCheckFailed) {
		err = nil
	}
	return rec, "live", err
}
