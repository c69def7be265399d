// The golden tables of the rules the baselines (bench/bare and
// bench/twohop, both over this package) mirror by copy.
//
// This module cannot import Foundry's internal packages, so the few domain
// rules the routes need are re-implemented in this package, each next to a comment
// naming the Foundry function it mirrors. These tables pin each copy to
// its original: every case names the original function, and its expected
// value is copied from that function's own test (named in the case) or
// worked out by hand from the original's code (said so in the case). A
// change on either side shows up here as a failing row:
//
//   - Foundry's rule changed (its own test changed): copy the new
//     expectations into the table, then change bare's copy until it passes.
//   - bare's copy changed: the failing row names the Foundry function it
//     must still agree with.
//
// Pinned here, without a database: the journal's account names
// (credit.Account.Name), a contribution's coherence score
// (attribution.Score), the stake's projection (credit.Project), exact
// money (money.FromFloat, money.Micros.String), the task PATCH rules
// (usecase.Patch.validate, usecase.App.apply, task.Claim) and the
// percentile rules (metrics.PercentileSorted, metrics.HistogramPercentile,
// metrics.BucketBounds). The stake's audit entry attributes
// (usecase.App.move) are built inside the stake's transaction, so
// bench/bare's stake_test.go pins them through the route, against Postgres.
//
// Not pinned: the rules bare keeps in SQL (the histogram bucket of a
// duration, metrics.BucketOf, in sqlCompleteTask; abtest.Arm.Record in
// its arm upsert), the routing table (routing.Default) and the tag rule
// (idea.NormalizeTags).
package sqlcore

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The originals, for the cases' messages.
const (
	origAccountName = "credit.Account.Name (services/ledger/internal/credit/journal.go)"
	origScore       = "attribution.Score (services/ledger/internal/attribution/coherence.go)"
	origProject     = "credit.Project (services/ledger/internal/credit/invest.go)"
	origFromFloat   = "money.FromFloat (services/ledger/internal/money/money.go)"
	origMicrosText  = "money.Micros.String (services/ledger/internal/money/money.go)"
	origValidate    = "usecase.Patch.validate (services/agent/internal/usecase/update.go)"
	origApply       = "usecase.App.apply with task.Claim (services/agent/internal/usecase/update.go, internal/task/task.go)"
	origPercentile  = "metrics.PercentileSorted (services/agent/internal/metrics/metrics.go)"
	origHistogram   = "metrics.HistogramPercentile (services/agent/internal/metrics/histogram.go)"
	origBounds      = "metrics.BucketBounds (services/agent/internal/metrics/histogram.go)"
)

func TestAccountNamesMirrorCredit(t *testing.T) {
	// Cases from credit's TestAccountNames (the available and staked ones:
	// bare names no other account).
	for _, c := range []struct{ got, want string }{
		{availableAccount("ada"), "available:ada"},
		{availableAccount("github:octo"), "available:github:octo"},
		{availableAccount("bob:ghost"), "available:bob:ghost"},
		{stakedAccount("ada", "idea-1"), "staked:ada:idea-1"},
		{stakedAccount("ada", "x:y"), "staked:ada:x:y"},
		{stakedAccount("github:octo", "x"), "staked:github%3Aocto:x"},
		{stakedAccount("100%", "x"), "staked:100%25:x"},
	} {
		if c.got != c.want {
			t.Errorf("%s: bare names the account %q, Foundry %q", origAccountName, c.got, c.want)
		}
	}
	if stakedAccount("github:octo", "x") == stakedAccount("github", "octo:x") {
		t.Errorf("%s: the two ways to split one old name must be two accounts", origAccountName)
	}
}

func TestCoherenceScoreMirrorsAttribution(t *testing.T) {
	// Cases from attribution's TestScore, in thousandths (Coherence's unit).
	for _, c := range []struct {
		name string
		meta map[string]any
		want int64
	}{
		{"no metadata", nil, 500},
		{"tests", map[string]any{"has_tests": true}, 700},
		{"docs", map[string]any{"has_docs": true}, 700},
		{"low complexity", map[string]any{"complexity": "low"}, 600},
		{"other complexity", map[string]any{"complexity": "high"}, 500},
		{"false flags earn nothing", map[string]any{"has_tests": false, "has_docs": false}, 500},
		{"tests and docs", map[string]any{"has_tests": true, "has_docs": true}, 900},
		{"everything is capped at 1.0", map[string]any{"has_tests": true, "has_docs": true, "complexity": "low"}, 1000},
		{"null values are absent", map[string]any{"has_tests": nil, "complexity": nil}, 500},
		{"unrelated keys are ignored", map[string]any{"files": 3.0}, 500},
	} {
		got, errs := coherenceScore(c.meta)
		if got != c.want || len(errs) != 0 {
			t.Errorf("%s, %s: bare scores %d (errors %v), Foundry %d", origScore, c.name, got, errs, c.want)
		}
	}
	// TestScore's "wrong types are 422": one field error, on the key.
	for _, c := range []struct {
		meta  map[string]any
		field string
	}{
		{map[string]any{"has_tests": "yes"}, "metadata.has_tests"},
		{map[string]any{"has_docs": 1.0}, "metadata.has_docs"},
		{map[string]any{"complexity": true}, "metadata.complexity"},
	} {
		if _, errs := coherenceScore(c.meta); len(errs) != 1 || errs[0].Field != c.field {
			t.Errorf("%s: %v gives the errors %v, want one on %s", origScore, c.meta, errs, c.field)
		}
	}
}

func TestProjectionMirrorsCredit(t *testing.T) {
	// Cases from credit's TestProject; the low multiplier and unlock of
	// testing and complete are stageProjections' own.
	for _, c := range []struct {
		stage     string
		coherence float64
		want      projection
	}{
		{"none", 0.5, projection{0.5, 3.0, 0}},
		{"testing", 1.0, projection{0.8, 2.6, 0.6}},
		{"complete", 0, projection{1.0, 1.0, 1}},
		{"bogus", 0.5, projection{0.5, 3.0, 0}}, // an unknown stage is none
	} {
		got := project(c.stage, c.coherence)
		if math.Abs(got.LowMultiplier-c.want.LowMultiplier) > 1e-9 || math.Abs(got.HighMultiplier-c.want.HighMultiplier) > 1e-9 ||
			math.Abs(got.StageUnlockPct-c.want.StageUnlockPct) > 1e-9 {
			t.Errorf("%s(%q, %v): bare %+v, Foundry %+v", origProject, c.stage, c.coherence, got, c.want)
		}
	}
}

func TestMoneyMirrorsMoney(t *testing.T) {
	tenth := 0.1 // a variable: constant arithmetic would be exact
	// Cases from money's TestFromFloat; the messages are its errors' texts.
	for _, c := range []struct {
		name string
		in   float64
		want int64
		err  string
	}{
		{"zero", 0, 0, ""},
		{"one tenth is exact", 0.1, 100_000, ""},
		{"cents", 19.99, 19_990_000, ""},
		{"six decimals", 0.000001, 1, ""},
		{"whole", 1e9, 1_000_000_000_000_000, ""},
		{"negative", -2.5, -2_500_000, ""},
		{"seven decimals", 0.0000001, 0, "must have at most 6 decimal places"},
		{"float noise is refused, not rounded", tenth + 0.2, 0, "must have at most 6 decimal places"},
		{"NaN", math.NaN(), 0, "must be a finite number"},
		{"+Inf", math.Inf(1), 0, "must be a finite number"},
		{"-Inf", math.Inf(-1), 0, "must be a finite number"},
		{"too large", 1e13, 0, "is too large"},
	} {
		got, err := fromFloat(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s, %s: bare %d (%v), Foundry %d", origFromFloat, c.name, got, err, c.want)
		case c.err != "" && (err == nil || err.Error() != c.err):
			t.Errorf("%s, %s: bare's error %v, Foundry's %q", origFromFloat, c.name, err, c.err)
		}
	}
	// Cases from money's TestString.
	for in, want := range map[int64]string{1_500_000: "1.500000", -1: "-0.000001", 0: "0.000000"} {
		if got := microsText(in); got != want {
			t.Errorf("%s(%d): bare %q, Foundry %q", origMicrosText, in, got, want)
		}
	}
}

// The PATCH cases' clock: t0 is when the running task was claimed.
var t0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

func us(t time.Time) *int64 {
	v := t.UnixMicro()
	return &v
}

func str(s string) *string { return &s }

func num(f float64) *float64 { return &f }

// outcome is what a PATCH did to a task, as the cases compare it.
type outcome struct {
	Status       string
	Worker       string
	Attempts     int
	Progress     float64
	Output       string
	StartedAt    *int64
	LeaseSeconds int
	LeaseExpires *int64
	CompletedAt  *int64
	Duration     *float64
	Write        write
}

func outcomeOf(t taskRow, w write) outcome {
	return outcome{Status: t.Status, Worker: deref(t.WorkerID), Attempts: t.Attempts, Progress: t.ProgressPct, Output: t.Output,
		StartedAt: t.StartedAt, LeaseSeconds: t.LeaseSeconds, LeaseExpires: t.LeaseExpiresAt, CompletedAt: t.CompletedAt,
		Duration: t.Duration, Write: w}
}

func TestPatchRulesMirrorUpdate(t *testing.T) {
	pending := taskRow{ID: "t", Status: "pending", CreatedAt: t0.Add(-time.Hour).UnixMicro()}
	running := pending
	running.Status, running.WorkerID, running.Attempts, running.StartedAt = "running", str("w1"), 1, us(t0)
	running.LeaseSeconds, running.LeaseExpiresAt = 300, us(t0.Add(5*time.Minute))
	completed := running
	completed.Status, completed.Output, completed.ProgressPct, completed.LeaseExpiresAt = "completed", "all green", 100, nil
	completed.CompletedAt, completed.Duration = us(t0.Add(90*time.Second)), num(90)
	decision := pending
	decision.Status = "needs_decision"
	later := t0.Add(90 * time.Second)

	// Hand-worked from the originals (TestUpdateRules walks the same
	// path): the answer's HTTP status for a refusal (the gateway's: invalid
	// 422, rejected 400, conflict 409), else the task after the PATCH.
	for _, c := range []struct {
		name   string
		orig   string
		cur    taskRow
		patch  TaskPatch
		at     time.Time
		status int
		want   outcome
	}{
		{name: "an empty PATCH is rejected", orig: origValidate, cur: pending, status: http.StatusBadRequest},
		{name: "an unknown status", orig: origValidate, cur: pending, patch: TaskPatch{Status: str("paused")}, status: 422},
		{name: "progress above 100", orig: origValidate, cur: pending, patch: TaskPatch{ProgressPct: num(101)}, status: 422},
		{name: "progress below 0", orig: origValidate, cur: pending, patch: TaskPatch{ProgressPct: num(-1)}, status: 422},
		{name: "progress NaN", orig: origValidate, cur: pending, patch: TaskPatch{ProgressPct: num(math.NaN())}, status: 422},
		{name: "an unknown error category", orig: origValidate, cur: pending, patch: TaskPatch{ErrorCategory: str("oops")}, status: 422},
		{name: "a negative value score", orig: origValidate, cur: pending, patch: TaskPatch{ValueScore: num(-1)}, status: 422},
		{name: "an infinite resource cost", orig: origValidate, cur: pending, patch: TaskPatch{ResourceCost: num(math.Inf(1))}, status: 422},
		{name: "a blank worker", orig: origValidate, cur: pending, patch: TaskPatch{WorkerID: str(" ")}, status: 422},
		{name: "a worker id of 201 characters", orig: origValidate, cur: pending,
			patch: TaskPatch{WorkerID: str(strings.Repeat("w", 201))}, status: 422},
		{name: "a current step of 1001 characters", orig: origValidate, cur: pending,
			patch: TaskPatch{Status: str("running"), WorkerID: str("w1"), CurrentStep: str(strings.Repeat("s", 1001))}, status: 422},

		{name: "running without a worker", orig: origApply, cur: pending, patch: TaskPatch{Status: str("running")}, status: 422},
		{name: "an error summary on completion", orig: origApply, cur: pending,
			patch: TaskPatch{Status: str("completed"), ErrorSummary: str("x")}, status: 422},
		{name: "a claim: one more attempt, started now, the default lease", orig: origApply, cur: pending,
			patch: TaskPatch{Status: str("running"), WorkerID: str(" w1 ")}, at: t0,
			want: outcome{Status: "running", Worker: "w1", Attempts: 1, StartedAt: us(t0), LeaseSeconds: 300,
				LeaseExpires: us(t0.Add(5 * time.Minute)), Write: writeClaim}},
		{name: "another worker's claim of a running task", orig: origApply, cur: running,
			patch: TaskPatch{Status: str("running"), WorkerID: str("w2")}, status: 409},
		{name: "the same worker's repeated claim renews the lease, no new attempt", orig: origApply, cur: running,
			patch: TaskPatch{Status: str("running"), WorkerID: str("w1"), ProgressPct: num(40)}, at: t0.Add(time.Minute),
			want: outcome{Status: "running", Worker: "w1", Attempts: 1, Progress: 40, StartedAt: us(t0), LeaseSeconds: 300,
				LeaseExpires: us(t0.Add(6 * time.Minute)), Write: writeRenew}},
		{name: "completion: 100 %, the duration since the claim, no lease", orig: origApply, cur: running,
			patch: TaskPatch{Status: str("completed"), Output: str("all green"), WorkerID: str("w1")}, at: later,
			want: outcome{Status: "completed", Worker: "w1", Attempts: 1, Progress: 100, Output: "all green", StartedAt: us(t0),
				LeaseSeconds: 300, CompletedAt: us(later), Duration: num(90), Write: writeComplete}},
		{name: "completion keeps a progress it is given", orig: origApply, cur: running,
			patch: TaskPatch{Status: str("completed"), ProgressPct: num(55)}, at: later,
			want: outcome{Status: "completed", Worker: "w1", Attempts: 1, Progress: 55, StartedAt: us(t0), LeaseSeconds: 300,
				CompletedAt: us(later), Duration: num(90), Write: writeComplete}},
		{name: "completion of a task never claimed: the duration since its creation", orig: origApply, cur: pending,
			patch: TaskPatch{Status: str("completed")}, at: later,
			want: outcome{Status: "completed", Progress: 100, CompletedAt: us(later), Duration: num(3690), Write: writeComplete}},
		{name: "completion before the claim's time (a clock behind): duration 0", orig: origApply, cur: running,
			patch: TaskPatch{Status: str("completed")}, at: t0.Add(-time.Second),
			want: outcome{Status: "completed", Worker: "w1", Attempts: 1, Progress: 100, StartedAt: us(t0), LeaseSeconds: 300,
				CompletedAt: us(t0.Add(-time.Second)), Duration: num(0), Write: writeComplete}},
		{name: "a repeated finishing PATCH answers the task unchanged", orig: origApply, cur: completed,
			patch: TaskPatch{Status: str("completed"), Output: str("all green")}, at: later.Add(time.Hour),
			want: outcomeOf(completed, writeNone)},
		{name: "any other PATCH of a finished task", orig: origApply, cur: completed,
			patch: TaskPatch{Status: str("completed"), Output: str("other")}, status: 409},
		{name: "a claim of a finished task", orig: origApply, cur: completed,
			patch: TaskPatch{Status: str("running"), WorkerID: str("w1")}, status: 409},
		{name: "a claim of a task that needs a decision", orig: origApply, cur: decision,
			patch: TaskPatch{Status: str("running"), WorkerID: str("w1")}, status: 409},
	} {
		err := c.patch.validate()
		var next taskRow
		w := writeNone
		if err == nil {
			next, w, err = c.patch.apply(c.cur, c.at)
		}
		var ae *Error
		switch {
		case c.status != 0 && !(errors.As(err, &ae) && ae.Status == c.status):
			t.Errorf("%s, %s: bare answers %v, Foundry %d", c.orig, c.name, err, c.status)
		case c.status == 0 && err != nil:
			t.Errorf("%s, %s: bare refuses (%v), Foundry does not", c.orig, c.name, err)
		case c.status == 0 && !reflect.DeepEqual(outcomeOf(next, w), c.want):
			t.Errorf("%s, %s:\nbare    %s\nFoundry %s", c.orig, c.name, show(outcomeOf(next, w)), show(c.want))
		}
	}
}

// show prints an outcome with its pointers' values.
func show(o outcome) string {
	at := func(v *int64) string {
		if v == nil {
			return "nil"
		}
		return time.UnixMicro(*v).UTC().Format(time.RFC3339Nano)
	}
	seconds := "nil"
	if o.Duration != nil {
		seconds = fmt.Sprint(*o.Duration)
	}
	return fmt.Sprintf("%s worker=%q attempts=%d progress=%v output=%q started=%s lease=%ds expires=%s completed=%s duration=%s write=%d",
		o.Status, o.Worker, o.Attempts, o.Progress, o.Output, at(o.StartedAt), o.LeaseSeconds, at(o.LeaseExpires),
		at(o.CompletedAt), seconds, o.Write)
}

func TestPercentilesMirrorMetrics(t *testing.T) {
	// Cases from metrics' TestPercentileLinearInterpolation.
	v := []float64{15, 20, 35, 40, 50}
	for _, c := range []struct{ p, want float64 }{{0, 15}, {25, 20}, {50, 35}, {95, 48}, {100, 50}, {40, 29}} {
		if got := percentileSorted(v, c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s(p%v): bare %v, Foundry %v", origPercentile, c.p, got, c.want)
		}
	}
	if got := percentileSorted([]float64{7}, 95); got != 7 {
		t.Errorf("%s of one value: bare %v, Foundry 7", origPercentile, got)
	}

	// Cases from metrics' TestHistogramPercentileHandWorked: two values in
	// bucket 0 spread at 0.25 and 0.75 ms, median halfway; one value in
	// the bucket of 60 s (metrics.BucketOf(60) = 556, worked by hand:
	// ⌈ln(60/0.001)/ln(1.02)⌉) is that bucket's midpoint at any percentile.
	if got := histogramPercentile([]bucket{{index: 0, n: 2}}, 50); math.Abs(got-0.0005) > 1e-12 {
		t.Errorf("%s, median of two bucket-0 values: bare %v, Foundry 0.0005", origHistogram, got)
	}
	lo, hi := bucketBounds(556)
	if !(lo < 60 && 60 <= hi) {
		t.Errorf("%s(556) = (%v, %v]: 60 s is not in it", origBounds, lo, hi)
	}
	for _, p := range []float64{0, 50, 100} {
		if got := histogramPercentile([]bucket{{index: 556, n: 1}}, p); math.Abs(got-(lo+hi)/2) > 1e-9 {
			t.Errorf("%s, p%v of one value: bare %v, Foundry the midpoint %v", origHistogram, p, got, (lo+hi)/2)
		}
	}
	// metrics.BucketBounds: bucket 0 is (0, floor]; bucket b ≥ 1 is
	// (floor·g^(b−1), floor·g^b]; consecutive buckets chain (from
	// TestBucketOfAndBounds).
	if lo, hi := bucketBounds(0); lo != 0 || hi != 0.001 {
		t.Errorf("%s(0): bare (%v, %v], Foundry (0, 0.001]", origBounds, lo, hi)
	}
	if lo, hi := bucketBounds(1); math.Abs(lo-0.001) > 1e-15 || math.Abs(hi-0.00102) > 1e-15 {
		t.Errorf("%s(1): bare (%v, %v], Foundry (0.001, 0.00102]", origBounds, lo, hi)
	}
	for b := range 50 {
		_, hi := bucketBounds(b)
		lo, _ := bucketBounds(b + 1)
		if math.Abs(hi-lo) > 1e-15 {
			t.Errorf("%s: bucket %d ends at %v but bucket %d starts at %v", origBounds, b, hi, b+1, lo)
		}
	}
}
