// Package attention raises the pipeline's attention flags from a summary
// of the task queue. The queries that build the summary are bounded (see
// the store); this package only judges it, with an injected "now".
package attention

import "time"

// Flag names, as the pipeline status lists them.
const (
	Stuck            = "stuck"
	RepeatedFailures = "repeated_failures"
	LowSuccessRate   = "low_success_rate"
)

// Config holds the thresholds (all configurable; the defaults are the
// documented ones).
type Config struct {
	// StuckAfter is how long the oldest pending task may wait while nothing
	// runs (10 minutes).
	StuckAfter time.Duration
	// FailureStreak is how many most recently finished tasks must all have
	// failed (3).
	FailureStreak int
	// Window is the rolling window of the success rate (7 days).
	Window time.Duration
	// MinTasks is the fewest finished tasks in the window for the rate to
	// count (10).
	MinTasks int
	// MinSuccessRate is the rate below which the flag is raised (0.8).
	MinSuccessRate float64
}

// Defaults are the documented thresholds.
var Defaults = Config{StuckAfter: 10 * time.Minute, FailureStreak: 3, Window: 7 * 24 * time.Hour, MinTasks: 10, MinSuccessRate: 0.8}

// Queue is what the flags are judged on.
type Queue struct {
	Pending int
	Running int
	// OldestPending is when the longest-waiting pending task was created
	// (zero when none is pending).
	OldestPending time.Time
	// LastFinished are the statuses' outcomes of the most recently finished
	// tasks, newest first, at most FailureStreak of them: true = failed.
	LastFinished []bool
	// WindowCompleted and WindowFailed count the tasks finished in the window.
	WindowCompleted int
	WindowFailed    int
}

// Flags is the pipeline attention object.
type Flags struct {
	Stuck            bool
	RepeatedFailures bool
	LowSuccessRate   bool
	// Names lists the raised flags, in the order above; never nil.
	Names []string
	// LongestWait is how long the oldest pending task has waited.
	LongestWait time.Duration
}

// Judge raises the flags:
//   - stuck: tasks are pending, none is running, and the oldest has waited
//     longer than StuckAfter;
//   - repeated_failures: the FailureStreak most recently finished tasks all
//     failed (fewer finished tasks than that: not raised);
//   - low_success_rate: the window holds at least MinTasks finished tasks
//     and their success rate is below MinSuccessRate.
func Judge(c Config, q Queue, now time.Time) Flags {
	f := Flags{Names: []string{}}
	if q.Pending > 0 && !q.OldestPending.IsZero() {
		f.LongestWait = max(now.Sub(q.OldestPending), 0)
	}
	if q.Pending > 0 && q.Running == 0 && f.LongestWait > c.StuckAfter {
		f.Stuck = true
		f.Names = append(f.Names, Stuck)
	}
	if c.FailureStreak > 0 && len(q.LastFinished) >= c.FailureStreak {
		all := true
		for _, failed := range q.LastFinished[:c.FailureStreak] {
			all = all && failed
		}
		if all {
			f.RepeatedFailures = true
			f.Names = append(f.Names, RepeatedFailures)
		}
	}
	if n := q.WindowCompleted + q.WindowFailed; n >= c.MinTasks && n > 0 &&
		float64(q.WindowCompleted)/float64(n) < c.MinSuccessRate {
		f.LowSuccessRate = true
		f.Names = append(f.Names, LowSuccessRate)
	}
	return f
}
