package agent

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/executor"
	"github.com/foundryhq/foundry/services/agent/internal/loop"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// oneIdea is a portfolio with one idea at stage none.
type oneIdea struct{ id string }

func (p oneIdea) Candidates(context.Context, int) ([]loop.Candidate, error) {
	return []loop.Candidate{{IdeaID: p.id, Name: p.id, Score: 1, Stage: "none", NextType: "spec"}}, nil
}

func (oneIdea) Stage(context.Context, string) (string, error) { return "specced", nil }

// lockstep holds every pass after its open-task check until all of them
// made it, so they all find the idea free and all try to open its task:
// what two replicas that both believe they lead do.
type lockstep struct {
	loopTasks
	arrived *sync.WaitGroup
	proceed <-chan struct{}
}

func (l lockstep) OpenIdeas(ctx context.Context, ids []string) (map[string]bool, error) {
	open, err := l.loopTasks.OpenIdeas(ctx, ids)
	l.arrived.Done()
	<-l.proceed
	return open, err
}

// gated is an executor whose runs succeed once release is closed.
type gated struct{ release <-chan struct{} }

func (gated) Name() string { return "gated" }

func (g gated) Run(ctx context.Context, _ executor.Task) (executor.Result, error) {
	select {
	case <-g.release:
		return executor.Result{Succeeded: true, Output: "done"}, nil
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
}

// TestTwoLeadersOpenOneTaskPerIdea: two replicas' loops that both believe
// they lead (the old leader has not yet noticed that it lost the lease)
// both find the idea free; the schema lets one task in, and the other pass
// is idle, not an error. The winner's run is held until the loser's pass
// ended, so the idea's task is open throughout.
func TestTwoLeadersOpenOneTaskPerIdea(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "agent", store.Migrations())
		uc := usecase.New(db, repos, usecase.Config{})
		ctx := context.Background()
		var arrived sync.WaitGroup
		arrived.Add(2)
		proceed, release := make(chan struct{}), make(chan struct{})
		type result struct {
			it  loop.Iteration
			err error
		}
		results := make(chan result, 2)
		for _, replica := range []string{"a", "b"} {
			l := &loop.Loop{
				Portfolio: oneIdea{id: "idea-1"},
				Tasks:     lockstep{loopTasks: loopTasks{uc: uc, claimAs: loopWorker, lease: time.Minute}, arrived: &arrived, proceed: proceed},
				Executor:  gated{release: release}, Recorder: recorder{uc: uc, holder: replica},
				Clock: clock.Real{}, Log: zap.NewNop(),
			}
			go func() {
				it, err := l.Once(ctx, false)
				results <- result{it, err}
			}()
		}
		arrived.Wait()
		close(proceed)

		var loser result
		select {
		case loser = <-results:
		case <-time.After(10 * time.Second):
			close(release)
			t.Fatal("neither pass ended: both opened a task for the idea and are running it")
		}
		close(release)
		winner := <-results
		require.NoError(t, loser.err)
		require.Equal(t, loop.Idle, loser.it.Outcome, loser.it.Detail)
		require.Contains(t, loser.it.Detail, "another replica opened it")
		require.NoError(t, winner.err)
		require.Equal(t, loop.Advanced, winner.it.Outcome, winner.it.Detail)

		page, err := uc.List(ctx, usecase.ListQuery{IdeaID: "idea-1"})
		require.NoError(t, err)
		require.Equal(t, 1, page.Total, "one task for the idea")
		require.Equal(t, winner.it.TaskID, page.Tasks[0].ID)
		require.Equal(t, "completed", string(page.Tasks[0].Status))
		rep, err := uc.Loop(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{loop.Idle: 1, loop.Advanced: 1}, rep.Counts, "both passes recorded, neither an error")
	})
}

// TestAStopEndsARunOncePass: a pass asked for through the API runs under
// the process's life, not its request: a stop cuts it short, its task is
// failed rather than left to nobody, the pass is recorded, and serve
// returns only then; a pass asked for once the stop began is refused.
func TestAStopEndsARunOncePass(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "agent", store.Migrations())
		uc := usecase.New(db, repos, usecase.Config{})
		p := newPipeline(pipelineConfig{Interval: time.Minute, Executor: executorExec, ExecTimeout: time.Minute,
			ExternalTimeout: time.Minute, RunOnceWait: time.Second}, uc, oneIdea{id: "idea-1"}, zap.NewNop(), prometheus.NewRegistry())
		release := make(chan struct{})
		defer close(release)
		p.loop.Executor = gated{release: release}
		life, stop := context.WithCancel(context.Background())
		served := make(chan struct{})
		go func() { p.serve(life); close(served) }()

		ended := make(chan error, 1)
		go func() {
			_, err := p.RunOnce(context.Background(), false)
			ended <- err
		}()
		require.Eventually(t, func() bool {
			page, err := uc.List(context.Background(), usecase.ListQuery{IdeaID: "idea-1"})
			return err == nil && page.Total == 1
		}, 10*time.Second, 10*time.Millisecond, "the pass opens the idea's task and runs it")
		st, err := p.Status(context.Background())
		require.NoError(t, err)
		require.True(t, st.Running, "the pass shows as running, though the loop is off")

		stop()
		select {
		case <-served:
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not return: the pass went on after the stop")
		}
		require.Error(t, <-ended, "the pass was stopped")
		_, err = p.RunOnce(context.Background(), false)
		require.Equal(t, fault.Unavailable, fault.KindOf(err), "refused once stopping: %v", err)

		page, err := uc.List(context.Background(), usecase.ListQuery{IdeaID: "idea-1"})
		require.NoError(t, err)
		require.Equal(t, 1, page.Total)
		require.Equal(t, "failed", string(page.Tasks[0].Status), "the loop's own task is failed, not left open")
		rep, err := uc.Loop(context.Background())
		require.NoError(t, err)
		require.Equal(t, int64(1), rep.Counts[loop.Errored], "the stopped pass is recorded")
	})
}

// instant is an executor whose runs succeed at once.
type instant struct{}

func (instant) Name() string { return "instant" }

func (instant) Run(context.Context, executor.Task) (executor.Result, error) {
	return executor.Result{Succeeded: true, Output: "done"}, nil
}

// reporting is an executor whose runs succeed with report.
type reporting struct{ report executor.Report }

func (reporting) Name() string { return "reporting" }

func (r reporting) Run(context.Context, executor.Task) (executor.Result, error) {
	return executor.Result{Succeeded: true, Output: "done", Report: r.report}, nil
}

// TestTheLoopRecordsItsOwnRunsUsage: the loop's own runs (the exec
// executor's result file) carry tokens, cost and an artifact onto the task as a
// worker's PATCH does, the cost estimated when only tokens came; a report
// the task's rules refuse is dropped with a note and the run's outcome
// still lands, so the idea is not left with an open task.
func TestTheLoopRecordsItsOwnRunsUsage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "agent", store.Migrations())
		uc := usecase.New(db, repos, usecase.Config{})
		ctx := context.Background()
		i64 := func(v int64) *int64 { return &v }
		f64 := func(v float64) *float64 { return &v }
		run := func(idea string, r executor.Report) store.Task {
			l := &loop.Loop{Portfolio: oneIdea{id: idea}, Tasks: loopTasks{uc: uc, claimAs: loopWorker, lease: time.Minute},
				Executor: reporting{report: r}, Recorder: recorder{uc: uc, holder: "a"}, Clock: clock.Real{}, Log: zap.NewNop()}
			it, err := l.Once(ctx, false)
			require.NoError(t, err)
			require.Equal(t, loop.Advanced, it.Outcome, it.Detail)
			got, err := uc.Get(ctx, it.TaskID)
			require.NoError(t, err)
			require.Equal(t, "completed", string(got.Status))
			return got
		}

		artifact := "https://example.com/pull/7"
		got := run("idea-1", executor.Report{TokensIn: i64(1000), TokensOut: i64(200), CostUSD: f64(0.5), ValueScore: f64(3), Artifact: &artifact})
		require.Equal(t, artifact, got.Artifact, "the run's artifact is kept with the task")
		require.Equal(t, int64(1000), *got.TokensIn)
		require.Equal(t, int64(200), *got.TokensOut)
		require.Equal(t, 0.5, *got.CostUSD)
		require.Equal(t, 3.0, *got.ValueScore)
		require.Equal(t, 0.5, *got.ResourceCost, "resource_cost defaults to the money spent")

		got = run("idea-2", executor.Report{TokensIn: i64(-5), CostUSD: f64(1)})
		require.Nil(t, got.TokensIn, "the refused report is not recorded")
		require.Nil(t, got.CostUSD)
		require.Contains(t, got.Output, "the command's result file was ignored")
		require.Contains(t, got.Output, "tokens_in")
	})
}

// TestASwitchOfExecutorLeavesNoIdeaBlocked: a pass waiting for a worker
// (external) ends with the process, its task pending; the process comes
// back running tasks itself (exec). The idea was skipped for good, "a
// task is already open"; now the next pass takes the task over, claims
// it as the loop's, runs it and advances the idea, opening no other.
func TestASwitchOfExecutorLeavesNoIdeaBlocked(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "agent", store.Migrations())
		uc := usecase.New(db, repos, usecase.Config{})
		ctx := context.Background()
		external := loopTasks{uc: uc}
		left, err := external.Create(ctx, loop.Candidate{IdeaID: "idea-1", Name: "idea-1", Stage: "none", NextType: "spec"}, "move it on")
		require.NoError(t, err)

		exec := &loop.Loop{Portfolio: oneIdea{id: "idea-1"}, Tasks: loopTasks{uc: uc, claimAs: loopWorker, lease: time.Minute},
			Executor: instant{}, Recorder: recorder{uc: uc, holder: "b"}, Clock: clock.Real{}, Log: zap.NewNop()}
		it, err := exec.Once(ctx, false)
		require.NoError(t, err)
		require.Equal(t, loop.Advanced, it.Outcome, it.Detail)
		require.Equal(t, left.ID, it.TaskID, "the task left pending is the one run")
		page, err := uc.List(ctx, usecase.ListQuery{IdeaID: "idea-1"})
		require.NoError(t, err)
		require.Equal(t, 1, page.Total, "no second task")
		got, err := uc.Get(ctx, left.ID)
		require.NoError(t, err)
		require.Equal(t, "completed", string(got.Status))
		require.Equal(t, loopWorker, got.WorkerID, "claimed as the loop's")
	})
}
