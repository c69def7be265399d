package loop_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/executor"
	"github.com/foundryhq/foundry/services/agent/internal/loop"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/clock"
)

var stages = []string{"none", "specced", "implementing", "testing", "reviewing", "complete"}

// world is a portfolio and a task queue in memory.
type world struct {
	mu       sync.Mutex
	ideas    map[string]string // id -> stage
	scores   map[string]float64
	open     map[string]bool // idea -> open task
	tasks    map[string]string
	outcomes map[string]executor.Result
	advanced map[string]int // task -> times advanced
	// abandoned holds what Abandon was given, by task.
	abandoned map[string]executor.Result
	// taken makes Create answer that the idea already has an open task.
	taken bool
	n     int
	// failing counts each idea's failed tasks in a row, dated by now.
	failing map[string]loop.Failures
	// orphans are open tasks no pass runs, by idea; adopted lists the
	// ones passes took over.
	orphans map[string]string
	adopted []string
	now     func() time.Time
}

func newWorld() *world {
	return &world{ideas: map[string]string{}, scores: map[string]float64{}, open: map[string]bool{},
		tasks: map[string]string{}, outcomes: map[string]executor.Result{}, advanced: map[string]int{},
		abandoned: map[string]executor.Result{}, failing: map[string]loop.Failures{}, now: time.Now,
		orphans: map[string]string{}}
}

func (w *world) Orphans(_ context.Context, ids []string) (map[string]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]string{}
	for _, id := range ids {
		if t, ok := w.orphans[id]; ok {
			out[id] = t
		}
	}
	return out, nil
}

func (w *world) Adopt(_ context.Context, id string) (executor.Task, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	idea := w.tasks[id]
	if w.orphans[idea] != id {
		return executor.Task{}, fmt.Errorf("adopt: %w", loop.ErrAlreadyOpen)
	}
	delete(w.orphans, idea)
	w.adopted = append(w.adopted, id)
	return executor.Task{ID: id, Type: string(nextType[w.ideas[idea]]), IdeaID: idea, Command: "true"}, nil
}

func (w *world) Failures(_ context.Context, ids []string) (map[string]loop.Failures, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]loop.Failures{}
	for _, id := range ids {
		if f, ok := w.failing[id]; ok {
			out[id] = f
		}
	}
	return out, nil
}

// nextType is the portfolio's rule (idea.NextTaskType), as the candidates
// the portfolio sends carry it.
var nextType = map[string]task.Type{"none": task.Spec, "specced": task.Impl, "implementing": task.Test,
	"testing": task.Review, "reviewing": task.Review}

func (w *world) Candidates(_ context.Context, limit int) ([]loop.Candidate, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []loop.Candidate
	for id, st := range w.ideas {
		if st == "complete" {
			continue
		}
		out = append(out, loop.Candidate{IdeaID: id, Name: id, Score: w.scores[id], Stage: st, NextType: string(nextType[st])})
	}
	// best score first
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Score > out[i].Score {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out[:min(limit, len(out))], nil
}

func (w *world) Stage(_ context.Context, id string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ideas[id], nil
}

func (w *world) OpenIdeas(_ context.Context, ids []string) (map[string]bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]bool{}
	for _, id := range ids {
		out[id] = w.open[id]
	}
	return out, nil
}

func (w *world) Create(ctx context.Context, c loop.Candidate, direction string) (executor.Task, error) {
	typ, idea := c.NextType, c.IdeaID
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return executor.Task{}, err // as a database would
	}
	if w.taken {
		return executor.Task{}, fmt.Errorf("create: %w", loop.ErrAlreadyOpen)
	}
	w.n++
	id := fmt.Sprintf("t%d", w.n)
	w.tasks[id] = idea
	w.open[idea] = true
	return executor.Task{ID: id, Type: typ, Direction: direction, IdeaID: idea, Command: "true"}, nil
}

func (w *world) Finish(ctx context.Context, id string, r executor.Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	w.outcomes[id] = r
	idea := w.tasks[id]
	w.open[idea] = false
	if r.Succeeded {
		delete(w.failing, idea)
	} else {
		f := w.failing[idea]
		w.failing[idea] = loop.Failures{Count: f.Count + 1, LastAt: w.now()}
	}
	return nil
}

func (w *world) Advance(_ context.Context, id string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.advanced[id] > 0 {
		return nil
	}
	w.advanced[id]++
	idea := w.tasks[id]
	for i, s := range stages {
		if s == w.ideas[idea] && i+1 < len(stages) {
			w.ideas[idea] = stages[i+1]
			break
		}
	}
	return nil
}

func (w *world) Abandon(ctx context.Context, id string, r executor.Result) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	w.abandoned[id] = r
	w.open[w.tasks[id]] = false
	return nil
}

// runner is an executor that succeeds unless told otherwise.
type runner struct {
	fail      map[string]bool // task type -> fail
	failIdeas map[string]bool // idea -> fail
	err       error
}

func (runner) Name() string { return "fake" }

func (r runner) Run(_ context.Context, t executor.Task) (executor.Result, error) {
	if r.err != nil {
		return executor.Result{}, r.err
	}
	if r.fail[t.Type] || r.failIdeas[t.IdeaID] {
		return executor.Result{Output: "--- FAIL", Summary: "--- FAIL", Category: task.CategoryValidationFailure}, nil
	}
	return executor.Result{Succeeded: true, Output: "ok"}, nil
}

type recorder struct {
	mu  sync.Mutex
	its []loop.Iteration
}

func (r *recorder) Record(ctx context.Context, it loop.Iteration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	r.its = append(r.its, it)
	return nil
}

func newLoop(w *world, ex executor.Executor, rec *recorder) *loop.Loop {
	return &loop.Loop{Portfolio: w, Tasks: w, Executor: ex, Recorder: rec,
		Clock: clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)), Log: zap.NewNop()}
}

func TestLoopDrivesTheBestIdeaToComplete(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["low"], w.scores["low"] = "none", 1
	w.ideas["high"], w.scores["high"] = "none", 9
	rec := &recorder{}
	l := newLoop(w, runner{}, rec)
	var types []string
	for i := range 6 {
		it, err := l.Once(context.Background(), false)
		require.NoError(t, err)
		require.Equal(t, loop.Advanced, it.Outcome, it.Detail)
		want := "high"
		if i == 5 {
			want = "low"
		}
		require.Equal(t, want, it.IdeaID, "the best score goes first until it is complete")
		types = append(types, it.TaskType)
	}
	require.Equal(t, []string{"spec", "impl", "test", "review", "review"}, types[:5])
	require.Equal(t, "complete", w.ideas["high"])
	require.Equal(t, "specced", w.ideas["low"], "the sixth pass moved on to the next idea")
	require.Equal(t, "none", rec.its[5].StageBefore)
	require.Equal(t, "specced", rec.its[5].StageAfter)
	require.Len(t, rec.its, 6)
}

func TestLoopSkipsIdeasWithOpenTasksAndGoesIdle(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "testing", 5
	w.ideas["b"], w.scores["b"] = "complete", 9
	w.open["a"] = true
	rec := &recorder{}
	it, err := newLoop(w, runner{}, rec).Once(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, loop.Idle, it.Outcome)
	require.Empty(t, it.IdeaID)
	require.Len(t, rec.its, 1)
}

func TestLoopDryRunPlansOnly(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "implementing", 5
	rec := &recorder{}
	it, err := newLoop(w, runner{}, rec).Once(context.Background(), true)
	require.NoError(t, err)
	require.Equal(t, loop.Planned, it.Outcome)
	require.Equal(t, "test", it.TaskType)
	require.Empty(t, it.TaskID)
	require.Empty(t, w.tasks, "nothing created")
	require.Empty(t, rec.its, "nothing recorded")
}

func TestLoopRecordsAFailedTaskAndKeepsTheStage(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "specced", 5
	rec := &recorder{}
	it, err := newLoop(w, runner{fail: map[string]bool{"impl": true}}, rec).Once(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, loop.TaskFailed, it.Outcome)
	require.Equal(t, "specced", it.StageAfter)
	require.Equal(t, "specced", w.ideas["a"])
	require.False(t, w.outcomes[it.TaskID].Succeeded)
	require.Equal(t, task.CategoryValidationFailure, w.outcomes[it.TaskID].Category)

	it, err = newLoop(w, runner{err: errors.New("no such binary")}, rec).Once(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, loop.TaskFailed, it.Outcome, "an executor error fails the task, recorded")
	require.Contains(t, w.outcomes[it.TaskID].Summary, "no such binary")
	require.Equal(t, task.CategoryExecutorCrash, w.outcomes[it.TaskID].Category)
}

func TestRunOnlyWhileLeading(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "none", 5
	rec := &recorder{}
	l := newLoop(w, runner{}, rec)
	l.Lead = func(context.Context) (bool, error) { return false, nil }
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	l.Run(ctx, 10*time.Millisecond)
	require.Empty(t, rec.its, "a follower runs no pass")
	require.Equal(t, "none", w.ideas["a"])
}

// until is an executor whose run lasts until done reports true, or limit.
type until struct {
	done  func() bool
	limit time.Duration
}

func (until) Name() string { return "until" }

func (u until) Run(context.Context, executor.Task) (executor.Result, error) {
	for deadline := time.Now().Add(u.limit); !u.done() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return executor.Result{Succeeded: true}, nil
}

// slow is an executor whose run lasts d.
type slow struct{ d time.Duration }

func (slow) Name() string { return "slow" }

func (s slow) Run(context.Context, executor.Task) (executor.Result, error) {
	time.Sleep(s.d)
	return executor.Result{Succeeded: true}, nil
}

func TestPassNeedsTheLeaseAndRenewsItWhileRunning(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "none", 5
	rec := &recorder{}
	var leads atomic.Int32
	// The run lasts until the lease has been renewed twice (at most 10 s):
	// a fixed sleep of a few renewal periods saw none on a loaded machine,
	// whose timers fire late.
	l := newLoop(w, until{done: func() bool { return leads.Load() >= 3 }, limit: 10 * time.Second}, rec)
	held := false
	l.Lead = func(context.Context) (bool, error) { leads.Add(1); return held, nil }
	l.RenewEvery = 20 * time.Millisecond

	_, err := l.Pass(context.Background(), false)
	require.ErrorIs(t, err, loop.ErrNotLeader)
	require.Empty(t, rec.its, "no pass without the lease")

	it, err := l.Pass(context.Background(), true)
	require.NoError(t, err, "a dry run needs no lease")
	require.Equal(t, loop.Planned, it.Outcome)

	held = true
	leads.Store(0)
	it, err = l.Pass(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, loop.Advanced, it.Outcome)
	// One take before the pass, then renewals every 20 ms while it runs.
	require.GreaterOrEqual(t, leads.Load(), int32(3), "the lease was renewed during the pass")
}

// TestPassesDoNotOverlapOrQueue: while a pass runs, another real pass is
// refused at once (ErrPassRunning), not queued behind it to run later for
// a caller long gone; a dry run runs beside it; Current names the running
// pass, and nothing once it ended.
func TestPassesDoNotOverlapOrQueue(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "none", 5
	w.ideas["b"], w.scores["b"] = "none", 4
	ex := newStoppable()
	l := newLoop(w, ex, &recorder{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := l.Pass(ctx, false)
		done <- err
	}()
	<-ex.started
	cur, ok := l.Current()
	require.True(t, ok, "a pass runs")
	require.NotEmpty(t, cur.ID)
	require.Equal(t, loop.Running, cur.Outcome)

	for range 3 {
		_, err := l.Pass(context.Background(), false)
		require.ErrorIs(t, err, loop.ErrPassRunning, "refused at once")
	}
	dry, err := l.Pass(context.Background(), true)
	require.NoError(t, err, "a dry run only reads")
	require.Equal(t, loop.Planned, dry.Outcome)
	require.Equal(t, "b", dry.IdeaID, "a's task is open")

	stop()
	require.Error(t, <-done)
	_, ok = l.Current()
	require.False(t, ok, "no pass runs now")
	w.mu.Lock()
	require.Equal(t, 1, w.n, "one task created: nothing queued ran later")
	w.mu.Unlock()
}

// stoppable is an executor whose run lasts until its context ends (a
// command the exec executor kills) or, as a safety net, a minute; it
// reports the run's context as it ended, and returns the output so far
// with the context's error, as exec does.
type stoppable struct {
	started chan struct{}
	ended   chan error
	// finishAnyway makes a stopped run report success (a run that ended
	// on its own just as the pass was stopped).
	finishAnyway bool
}

func newStoppable() *stoppable {
	return &stoppable{started: make(chan struct{}, 1), ended: make(chan error, 1)}
}

func (*stoppable) Name() string { return "stoppable" }

func (s *stoppable) Run(ctx context.Context, _ executor.Task) (executor.Result, error) {
	s.started <- struct{}{}
	select {
	case <-ctx.Done():
		s.ended <- ctx.Err()
		if s.finishAnyway {
			return executor.Result{Succeeded: true, Output: "done"}, nil
		}
		return executor.Result{Output: "half done"}, ctx.Err()
	case <-time.After(time.Minute):
		s.ended <- nil
		return executor.Result{Succeeded: true, Output: "ran to its end"}, nil
	}
}

// TestALostRenewalStopsThePass: a renewal during a pass that fails, finds
// the lease taken or hangs cancels the pass's context at once: the run is
// cut short, its task abandoned with the cause, the pass recorded as an
// error, and Pass answers ErrLeaseLost.
func TestALostRenewalStopsThePass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		renew  func(ctx context.Context) (bool, error)
		lease  time.Duration
		reason string
	}{
		{"the lease ran out before a renewal", func(context.Context) (bool, error) { return true, nil }, 10 * time.Millisecond,
			"it may have expired before a renewal"},
		{"the renewal fails", func(context.Context) (bool, error) { return false, errors.New("connection refused") }, 0,
			"renewing it failed: connection refused"},
		{"the lease is taken", func(context.Context) (bool, error) { return false, nil }, 0, "another replica holds it"},
		{"the renewal hangs", func(ctx context.Context) (bool, error) { <-ctx.Done(); return false, ctx.Err() }, 0,
			"renewing it failed: context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld()
			w.ideas["a"], w.scores["a"] = "none", 5
			rec := &recorder{}
			ex := newStoppable()
			l := newLoop(w, ex, rec)
			var calls atomic.Int32
			l.Lead = func(ctx context.Context) (bool, error) {
				if calls.Add(1) == 1 {
					return true, nil // the pass takes the lease
				}
				return tc.renew(ctx)
			}
			l.RenewEvery, l.Lease = 20*time.Millisecond, tc.lease

			begun := time.Now()
			it, err := l.Pass(context.Background(), false)
			require.ErrorIs(t, err, loop.ErrLeaseLost)
			require.ErrorContains(t, err, tc.reason)
			require.ErrorIs(t, <-ex.ended, context.Canceled, "the run's context was cancelled")
			require.Less(t, time.Since(begun), 10*time.Second, "the pass stopped long before its run would have ended")

			require.Equal(t, loop.Errored, it.Outcome)
			require.Contains(t, it.Detail, "the pass was stopped: lost the pipeline loop's lease")
			require.Len(t, rec.its, 1, "the stopped pass is recorded")
			require.Equal(t, loop.Errored, rec.its[0].Outcome)

			ab, ok := w.abandoned[it.TaskID]
			require.True(t, ok, "the task whose run was cut short is abandoned")
			require.False(t, ab.Succeeded)
			require.Equal(t, task.CategoryExecutorCrash, ab.Category)
			require.Contains(t, ab.Summary, "the pipeline loop stopped the run: lost the pipeline loop's lease")
			require.Contains(t, ab.Output, "half done", "what the run printed is kept")
			require.Empty(t, w.outcomes, "no result was recorded as the run's own")
			require.Equal(t, "none", w.ideas["a"])
		})
	}
}

// TestASlowRenewalInTimeKeepsThePass: a renewal slower than the interval
// that answers before the lease may have expired keeps the pass going.
func TestASlowRenewalInTimeKeepsThePass(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "none", 5
	rec := &recorder{}
	l := newLoop(w, slow{d: 300 * time.Millisecond}, rec)
	var renewals atomic.Int32
	l.Lead = func(context.Context) (bool, error) {
		if renewals.Add(1) > 1 {
			time.Sleep(40 * time.Millisecond) // twice the interval
		}
		return true, nil
	}
	l.RenewEvery, l.Lease = 20*time.Millisecond, 2*time.Second

	it, err := l.Pass(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, loop.Advanced, it.Outcome)
	require.Greater(t, renewals.Load(), int32(2), "renewed during the pass")
}

// TestARunThatEndsAsTheLeaseIsLostIsRecorded: a run that ended on its own
// has its result recorded on its task even though the pass's context was
// cancelled meanwhile; the pass is not an error.
func TestARunThatEndsAsTheLeaseIsLostIsRecorded(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "none", 5
	rec := &recorder{}
	ex := newStoppable()
	ex.finishAnyway = true
	l := newLoop(w, ex, rec)
	var calls atomic.Int32
	l.Lead = func(context.Context) (bool, error) { return calls.Add(1) == 1, nil }
	l.RenewEvery = 20 * time.Millisecond

	it, err := l.Pass(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, loop.Advanced, it.Outcome)
	require.True(t, w.outcomes[it.TaskID].Succeeded, "the result was recorded")
	require.Empty(t, w.abandoned)
	require.Equal(t, "specced", w.ideas["a"])
	require.Len(t, rec.its, 1)
}

// TestAnIdeaAnotherReplicaOpenedIsNoError: when the schema refuses the
// task because another replica opened one for the idea since this pass
// looked, the pass is idle: nothing runs, nothing fails.
func TestAnIdeaAnotherReplicaOpenedIsNoError(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "none", 5
	w.taken = true
	rec := &recorder{}
	ex := newStoppable()
	it, err := newLoop(w, ex, rec).Once(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, loop.Idle, it.Outcome)
	require.Contains(t, it.Detail, "another replica opened it")
	require.Empty(t, it.TaskID)
	require.Empty(t, ex.started, "nothing ran")
	require.Len(t, rec.its, 1)
}

// TestAStoppedPassCreatesNothing: a pass whose context ends before it
// creates its task creates none.
func TestAStoppedPassCreatesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "none", 5
	rec := &recorder{}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(loop.ErrLeaseLost)
	it, err := newLoop(w, runner{}, rec).Once(ctx, false)
	require.ErrorIs(t, err, loop.ErrLeaseLost)
	require.Equal(t, loop.Errored, it.Outcome)
	require.Empty(t, w.tasks)
	require.Len(t, rec.its, 1)
}

func TestBackoffWait(t *testing.T) {
	t.Parallel()
	b := loop.Backoff{Base: time.Minute, Max: time.Hour}
	for n, want := range map[int]time.Duration{0: 0, 1: time.Minute, 2: 2 * time.Minute, 3: 4 * time.Minute, 7: time.Hour,
		1000: time.Hour} {
		require.Equal(t, want, b.Wait(n), "after %d failures", n)
	}
	require.Equal(t, time.Duration(0), loop.Backoff{}.Wait(3), "no base: no wait")
}

// TestAFailingIdeaDoesNotStarveTheRest: the best idea's task fails every
// time (a provider answering 429). It took every pass; now it is backed
// off after each failure, 1, 2, 4, 8 minutes, and the other ideas are
// driven to complete meanwhile. Passes every 30 s for 20 minutes.
func TestAFailingIdeaDoesNotStarveTheRest(t *testing.T) {
	t.Parallel()
	w := newWorld()
	for id, score := range map[string]float64{"top": 9, "b": 5, "c": 3} {
		w.ideas[id], w.scores[id] = "none", score
	}
	fc := clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	w.now = fc.Now
	rec := &recorder{}
	l := newLoop(w, runner{failIdeas: map[string]bool{"top": true}}, rec)
	l.Clock, l.Backoff = fc, loop.Backoff{Base: time.Minute, Max: time.Hour}
	tries := 0
	for range 40 {
		it, err := l.Pass(context.Background(), false)
		require.NoError(t, err)
		if it.IdeaID == "top" {
			tries++
			require.Equal(t, loop.TaskFailed, it.Outcome)
		}
		fc.Advance(30 * time.Second)
	}
	require.Equal(t, "complete", w.ideas["b"], "driven to complete beside the failing idea")
	require.Equal(t, "complete", w.ideas["c"])
	// Failures at 0, 1, 3, 7 and 15 minutes; the next is due at 31.
	require.Equal(t, 5, tries, "the failing idea took only its backoff's share of the 40 passes")
	it, err := l.Pass(context.Background(), true)
	require.NoError(t, err)
	require.Equal(t, loop.Idle, it.Outcome)
	require.Contains(t, it.Detail, "1 backing off after failed tasks (idea top until 2026-11-23T12:31:00Z)")
}

// TestAPassRunsATaskAnEarlierPassLeft: an idea whose loop task was left
// pending (a restart ended its pass, or the executor changed) was
// skipped for good as "a task is already open"; now a pass takes the
// task over and runs it, opening no other.
func TestAPassRunsATaskAnEarlierPassLeft(t *testing.T) {
	t.Parallel()
	w := newWorld()
	w.ideas["a"], w.scores["a"] = "none", 5
	w.tasks["left"], w.open["a"], w.orphans["a"] = "a", true, "left"
	it, err := newLoop(w, runner{}, &recorder{}).Once(context.Background(), false)
	require.NoError(t, err)
	require.Equal(t, loop.Advanced, it.Outcome, it.Detail)
	require.Equal(t, "left", it.TaskID)
	require.True(t, it.Adopted)
	require.Contains(t, it.Detail, "ran task left, which an earlier pass left open")
	require.Equal(t, []string{"left"}, w.adopted)
	require.Zero(t, w.n, "no task opened")
	require.Equal(t, "specced", w.ideas["a"])
}
