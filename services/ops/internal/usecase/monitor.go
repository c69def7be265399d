package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/lease"
)

// MonitorLease is the lease the economy monitor's leader holds.
const MonitorLease = "economy-monitor"

// MonitorRetention is how long the monitor's checks are kept.
const MonitorRetention = 7 * 24 * time.Hour

// Ledger is what the economy monitor needs of the ledger, through its gRPC
// API (peer.Ledger): ops never reads another service's schema.
type Ledger interface {
	// Check asks the ledger to check itself.
	Check(ctx context.Context) (monitor.Check, error)
	// SetMode applies a mode; it reports the mode in force afterwards.
	SetMode(ctx context.Context, mode, reason string) (string, error)
}

// MonitorConfig configures the economy monitor's use cases.
type MonitorConfig struct {
	// Ledger is the ledger; nil when this deployment does not run the
	// monitor (Coherence is then unavailable).
	Ledger Ledger
	// Interval is how often the leader checks (0: nobody does); a
	// recorded check from the last two intervals answers Coherence.
	Interval time.Duration
	// Timeout bounds one check of the ledger (the longer of Interval and
	// 10 s when zero).
	Timeout time.Duration
	// EscalateAfter is how many failed checks in a row raise the economy
	// to warning (monitor.EscalateAfter when zero).
	EscalateAfter int
}

// ErrCheckFailed marks CheckEconomy's error for a check that could not be
// completed: it was recorded and logged already.
var ErrCheckFailed = errors.New("the ledger could not be checked")

// errNoCheck is latestCheck's answer before the first check.
var errNoCheck = errors.New("no monitor check yet")

// LeadMonitor takes or renews the economy monitor's lease for holder for
// ttl and reports whether holder has it. The lease expires by the
// database's clock, which the replicas share (see the platform lease
// package).
func (a *App) LeadMonitor(ctx context.Context, holder string, ttl time.Duration) (bool, error) {
	return lease.Take(ctx, a.db, MonitorLease, holder, ttl)
}

// ReleaseMonitor gives the monitor's lease up when holder has it, so
// another replica takes over at once.
func (a *App) ReleaseMonitor(ctx context.Context, holder string) error {
	return lease.Release(ctx, a.db, MonitorLease, holder)
}

// CheckEconomy is the leader's check, made by holder: it asks the ledger
// to check itself, grades the answer (monitor.Decide), asks the ledger to
// apply the decision (monitor.Apply) and records the check. A check that
// could not reach the ledger is recorded with its error and returned,
// wrapping ErrCheckFailed.
func (a *App) CheckEconomy(ctx context.Context, holder string) (monitor.Record, error) {
	return a.checkEconomy(ctx, holder, true)
}

// CoherenceResult is the economy monitor's report.
type CoherenceResult struct {
	// Check is the newest check.
	Check monitor.Record
	// Source is "monitor" (the leader's record) or "live" (a check run now
	// that changed nothing).
	Source string
	// Interval is the monitor's interval.
	Interval time.Duration
}

// Coherence returns the newest check and says where it came from: the
// leader's record ("monitor") when there is one from the last two
// intervals, failed or not (a failing leader's record says how long the
// ledger has been unchecked, and a live check would most likely fail the
// same way), otherwise a check run now that changes nothing ("live"). A
// live check that fails is returned as a failed record, not an error.
// fault.Unavailable when the monitor does not run here or its records
// cannot be read.
func (a *App) Coherence(ctx context.Context) (CoherenceResult, error) {
	m := a.cfg.Monitor
	if m.Ledger == nil {
		return CoherenceResult{}, fault.New(fault.Unavailable, "the economy monitor is not running in this deployment")
	}
	rec, err := a.latestCheck(ctx)
	switch {
	case err == nil && m.Interval > 0 && a.cfg.Clock.Now().Sub(rec.CheckedAt) <= 2*m.Interval:
		return CoherenceResult{Check: rec, Source: "monitor", Interval: m.Interval}, nil
	case err != nil && !errors.Is(err, errNoCheck):
		a.monitorLog.Warn("economy monitor: read the latest check", zap.Error(err))
		return CoherenceResult{}, unchecked()
	}
	rec, err = a.checkEconomy(ctx, "", false)
	if err != nil && !errors.Is(err, ErrCheckFailed) {
		a.monitorLog.Warn("economy monitor: live check", zap.Error(err))
		return CoherenceResult{}, unchecked()
	}
	return CoherenceResult{Check: rec, Source: "live", Interval: m.Interval}, nil
}

func unchecked() error {
	return fault.New(fault.Unavailable, "the ledger could not be checked: try again shortly")
}

// checkEconomy runs one check: asks the ledger, decides, applies the
// decision when apply is set (the leader) and records the check.
func (a *App) checkEconomy(ctx context.Context, holder string, apply bool) (monitor.Record, error) {
	m := a.cfg.Monitor
	rec := monitor.Record{ID: a.cfg.NewID(), CheckedAt: a.now(), Holder: holder}
	if m.Ledger == nil {
		return rec, fault.New(fault.Unavailable, "the economy monitor is not running in this deployment")
	}
	cctx, cancel := context.WithTimeout(ctx, a.checkTimeout())
	defer cancel()
	chk, err := m.Ledger.Check(cctx)
	if err != nil {
		if ctx.Err() != nil {
			// Shutting down: not a failed check.
			return rec, err
		}
		return a.checkFailed(ctx, rec, apply, err, cctx.Err() != nil)
	}
	rec.Check, rec.Mismatched = chk, len(chk.Mismatched)
	rec.Decision = monitor.Decide(chk)
	if !apply {
		return rec, nil
	}
	if mode, change := monitor.Apply(chk.Mode, rec.Decision); change {
		if _, err := m.Ledger.SetMode(cctx, mode, rec.Decision.Reason()); err != nil {
			rec.Error = "apply " + mode + ": " + err.Error()
		} else {
			rec.Applied = true
			a.monitorLog.Warn("economy monitor: mode changed", zap.String("from", chk.Mode), zap.String("to", mode),
				zap.String("reason", rec.Decision.Reason()), zap.Int("score", rec.Decision.Score))
		}
	}
	if err := a.recordCheck(ctx, rec); err != nil {
		return rec, err
	}
	return rec, nil
}

// checkFailed handles a check that could not be completed, so the monitor
// never goes quiet (fails open) when it cannot see: the leader (apply)
// counts it with the failed checks recorded since the last completed one,
// records it with its decision (monitor.DecideFailed: unknown, then
// warning), asks the ledger for warning once the count reaches the
// threshold and the economy was in a milder mode (monitor.Escalates), and
// logs it at error level every time. timedOut says the check outlived the
// monitor's timeout.
func (a *App) checkFailed(ctx context.Context, rec monitor.Record, apply bool, err error, timedOut bool) (monitor.Record, error) {
	cause := err.Error()
	if timedOut {
		cause = fmt.Sprintf("timed out after %s", a.checkTimeout())
	}
	rec.Error = err.Error()
	rec.Failed = 1
	after := a.cfg.Monitor.EscalateAfter
	if !apply {
		rec.Decision = monitor.DecideFailed(rec.Failed, after, cause)
		return rec, fmt.Errorf("check the ledger: %w: %w", ErrCheckFailed, err)
	}
	streak, serr := a.unit.Read().Checks.Streak(ctx)
	if serr != nil {
		// Counted as the first: the failure is still recorded and logged.
		a.monitorLog.Warn("economy monitor: count failed checks", zap.Error(serr))
	}
	rec.Failed = streak.Failed + 1
	rec.Decision = monitor.DecideFailed(rec.Failed, after, cause)
	if monitor.Escalates(streak.LastMode, rec.Decision) {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if mode, err := a.cfg.Monitor.Ledger.SetMode(sctx, monitor.Warning, rec.Decision.Reason()); err != nil {
			rec.Error += "; apply " + monitor.Warning + ": " + err.Error()
		} else {
			rec.Applied = mode == monitor.Warning
		}
	}
	a.monitorLog.Error("economy monitor: the ledger could not be checked", zap.Error(err), zap.Bool("timed_out", timedOut),
		zap.Int("failed_in_a_row", rec.Failed), zap.String("decided_mode", rec.Decision.Mode), zap.Bool("applied", rec.Applied))
	if ierr := a.recordCheck(ctx, rec); ierr != nil {
		return rec, ierr
	}
	return rec, fmt.Errorf("check the ledger: %w: %w", ErrCheckFailed, err)
}

// checkTimeout bounds one check of the ledger.
func (a *App) checkTimeout() time.Duration {
	m := a.cfg.Monitor
	if m.Timeout > 0 {
		return m.Timeout
	}
	return max(m.Interval, 10*time.Second)
}

// recordCheck records a check and, in the same transaction, prunes the
// checks older than MonitorRetention before it.
func (a *App) recordCheck(ctx context.Context, rec monitor.Record) error {
	return wrap("record the monitor's check", a.unit.Tx(ctx, func(r Repos) error {
		if err := r.Checks.Insert(ctx, rec); err != nil {
			return err
		}
		_, err := r.Checks.Prune(ctx, rec.CheckedAt.Add(-MonitorRetention))
		return err
	}))
}

// LatestCheck returns the newest check the monitor recorded (one row, by
// an index), for /metrics; ok is false before the first and after a week
// without one (records are pruned).
func (a *App) LatestCheck(ctx context.Context) (rec monitor.Record, ok bool, err error) {
	rec, err = a.latestCheck(ctx)
	if errors.Is(err, errNoCheck) {
		return monitor.Record{}, false, nil
	}
	return rec, err == nil, err
}

// latestCheck returns the newest recorded check; errNoCheck before the
// first.
func (a *App) latestCheck(ctx context.Context) (monitor.Record, error) {
	rec, err := a.unit.Read().Checks.Latest(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return monitor.Record{}, errNoCheck
	}
	if err != nil {
		return monitor.Record{}, wrap("read the monitor's latest check", err)
	}
	return rec, nil
}
