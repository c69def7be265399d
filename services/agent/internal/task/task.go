// Package task holds the agent pipeline's task rules: statuses and types,
// the transitions a PATCH may make (the claim rule, the failure rule),
// failure classification, and the stage → task type mapping the loop uses.
// It has no SQL and no proto.
package task

import (
	"strings"
	"unicode/utf8"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// Status is a task's status.
type Status string

// The statuses.
const (
	Pending       Status = "pending"
	Running       Status = "running"
	Completed     Status = "completed"
	Failed        Status = "failed"
	TimedOut      Status = "timed_out"
	NeedsDecision Status = "needs_decision"
	// Discarded is a task whose last attempt failed (Retry): a dead
	// letter, out of the queue until an operator retries it.
	Discarded Status = "discarded"
	// Cancelled is a task an operator took out of the queue.
	Cancelled Status = "cancelled"
)

// Statuses lists every status, in the order counts report them.
var Statuses = []Status{Pending, Running, Completed, Failed, TimedOut, NeedsDecision, Discarded, Cancelled}

// ParseStatus validates a status.
func ParseStatus(s string) (Status, bool) {
	for _, v := range Statuses {
		if string(v) == s {
			return v, true
		}
	}
	return "", false
}

// Finished reports whether the status ends the task's run: no PATCH
// changes it (a failed task's retry, and an operator's retry, reopen it).
func (s Status) Finished() bool {
	return s == Completed || s == Failed || s == TimedOut || s == Discarded || s == Cancelled
}

// Unsuccessful reports whether the status ends a run that did not
// complete: it counts against success rates and in the repeated-failure
// rule. A cancelled task is neither success nor failure.
func (s Status) Unsuccessful() bool { return s == Failed || s == TimedOut || s == Discarded }

// NeedsAttention reports whether the task belongs in the attention list
// (the spec's failed and needs_decision).
func (s Status) NeedsAttention() bool { return s == Failed || s == NeedsDecision }

// Retryable reports whether an operator may put a task of the status
// back in the queue (POST /api/agent/tasks/{id}/retry): any run that
// ended without completing.
func (s Status) Retryable() bool { return s.Unsuccessful() || s == Cancelled }

// Cancellable reports whether an operator may cancel a task of the
// status: any task not finished, and a failed one waiting for its retry.
func (s Status) Cancellable() bool { return !s.Finished() || s == Failed }

// Type is a task's type.
type Type string

// The task types.
const (
	Spec       Type = "spec"
	Impl       Type = "impl"
	Test       Type = "test"
	Review     Type = "review"
	Heal       Type = "heal"
	CodeReview Type = "code-review"
	Merge      Type = "merge"
	Deploy     Type = "deploy"
	Verify     Type = "verify"
	Reflect    Type = "reflect"
)

// Types lists every task type.
var Types = []Type{Spec, Impl, Test, Review, Heal, CodeReview, Merge, Deploy, Verify, Reflect}

// ParseType validates a task type.
func ParseType(s string) (Type, bool) {
	for _, v := range Types {
		if string(v) == s {
			return v, true
		}
	}
	return "", false
}

// Advances reports whether completing a task of this type advances its
// idea (the portfolio's AdvanceForTask decides by how much: one stage).
func (t Type) Advances() bool { return t == Spec || t == Impl || t == Test || t == Review }

// Error categories, in the order classification tries them.
const (
	CategoryTimeout           = "timeout"
	CategoryExecutorCrash     = "executor_crash"
	CategoryProviderError     = "provider_error"
	CategoryValidationFailure = "validation_failure"
	CategoryUnknown           = "unknown"
)

// categoryMarkers are the lowercase substrings that put an output in a
// category; the first category with a match wins.
var categoryMarkers = []struct {
	category string
	markers  []string
}{
	{CategoryTimeout, []string{"timed out", "timeout", "deadline exceeded", "took too long"}},
	{CategoryExecutorCrash, []string{"panic:", "segmentation fault", "sigsegv", "sigkill", "killed", "core dumped",
		"traceback (most recent call last)", "exit status", "exited with", "crash", "out of memory", "oom"}},
	{CategoryProviderError, []string{"rate limit", "rate_limit", "429", "too many requests", "503", "502",
		"service unavailable", "bad gateway", "overloaded", "quota", "api error", "provider", "upstream"}},
	{CategoryValidationFailure, []string{"validation", "invalid", "assert", "expected", "test failed", "tests failed",
		"--- fail", "lint", "does not compile", "syntax error", "type error"}},
}

// MaxSummary bounds an error summary, in characters.
const MaxSummary = 500

// Classify returns the category of a failed task's output (first match
// wins, unknown when nothing matches).
func Classify(output string) string {
	lower := strings.ToLower(output)
	for _, c := range categoryMarkers {
		for _, m := range c.markers {
			if strings.Contains(lower, m) {
				return c.category
			}
		}
	}
	return CategoryUnknown
}

// Summarize is the first non-empty line of output, trimmed, at most
// MaxSummary characters (cut on a character boundary).
func Summarize(output string) string {
	for line := range strings.Lines(output) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > MaxSummary {
			runes := []rune(line)
			line = string(runes[:MaxSummary])
		}
		return line
	}
	return ""
}

// Diagnosis is what a failure records.
type Diagnosis struct {
	Summary  string
	Category string
}

// Diagnose applies the failure rule: a task may fail only with a non-empty
// error_summary or output (422 otherwise); without a summary, the summary
// and category come from the output; with one and no category, the
// category is classified from the summary and output together.
func Diagnose(summary, category, output string) (Diagnosis, error) {
	summary, output = strings.TrimSpace(summary), strings.TrimRight(output, " \t\r\n")
	if summary == "" && strings.TrimSpace(output) == "" {
		return Diagnosis{}, fault.Validation(
			fault.Field("error_summary", "a failed task needs error_summary or output"),
			fault.Field("output", "a failed task needs error_summary or output"))
	}
	if summary == "" {
		summary = Summarize(output)
	}
	if utf8.RuneCountInString(summary) > MaxSummary {
		summary = string([]rune(summary)[:MaxSummary])
	}
	if category == "" {
		category = Classify(summary + "\n" + output)
	}
	return Diagnosis{Summary: summary, Category: category}, nil
}

// ValidCategory reports whether a client-given category is one of the five.
func ValidCategory(c string) bool {
	switch c {
	case CategoryTimeout, CategoryExecutorCrash, CategoryProviderError, CategoryValidationFailure, CategoryUnknown:
		return true
	}
	return false
}

// Claim applies the claim rule: moving a task to running needs a worker_id;
// a pending task goes to that worker; a running task claimed by the same
// worker is a no-op (a retried claim); claimed by another worker it is a
// conflict (409); a finished task cannot be claimed.
func Claim(current Status, currentWorker, worker string) error {
	switch {
	case strings.TrimSpace(worker) == "":
		return fault.Validation(fault.Field("worker_id", "is required to move a task to running"))
	case current == Running && currentWorker == worker:
		return nil
	case current == Running:
		return fault.New(fault.Conflict, "task already claimed by another worker")
	case current != Pending:
		return fault.New(fault.Conflict, "a %s task cannot be claimed", current)
	}
	return nil
}

// Reporter is who sends a task's update: the credential's id
// (authz.Principal.ID) and whether it is an operator's (administrators
// included). The zero Reporter is Foundry itself (the pipeline loop's own
// executor), which the rule does not restrict.
type Reporter struct {
	ID       string
	Operator bool
}

// CheckReport applies the reporter rule to an update of a task claimed by
// claimedBy ("" when unclaimed): a claimed task is its claimer's, so a
// worker cannot complete or fail another worker's task, whatever worker_id
// it names; an unclaimed task is claimed first (the update moves it to
// running). Operators and Foundry itself may update any task.
func (r Reporter) CheckReport(claimedBy string, claims bool) error {
	switch {
	case r.Operator || r.ID == "":
		return nil
	case claimedBy != "" && claimedBy != r.ID:
		return fault.New(fault.Forbidden, "the task was claimed with another credential: only its claimer, or an operator, reports on it")
	case claimedBy == "" && !claims:
		return fault.New(fault.Forbidden, "a worker reports only on tasks it claimed: claim the task first (status running)")
	}
	return nil
}
