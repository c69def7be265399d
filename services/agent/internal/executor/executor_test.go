package executor_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/executor"
	"github.com/foundryhq/foundry/services/agent/internal/task"
)

func TestExecSuccessAndEnvironment(t *testing.T) {
	t.Parallel()
	res, err := executor.Exec{Timeout: 10 * time.Second}.Run(context.Background(), executor.Task{
		ID: "t1", Type: "spec", IdeaID: "i1", Model: "m", Direction: "write it",
		Command: `echo "task=$FOUNDRY_TASK_ID type=$FOUNDRY_TASK_TYPE idea=$FOUNDRY_IDEA_ID"`,
	})
	require.NoError(t, err)
	require.True(t, res.Succeeded)
	require.Equal(t, "task=t1 type=spec idea=i1\n", res.Output)
	require.Empty(t, res.Category)
}

// TestExecReadsTheResultFile: a command's $FOUNDRY_RESULT_FILE is its
// report (the file foundry worker reads too); a malformed one, or none, is
// no report and does not change the outcome.
func TestExecReadsTheResultFile(t *testing.T) {
	t.Parallel()
	run := func(cmd string) executor.Result {
		res, err := executor.Exec{Timeout: 10 * time.Second}.Run(context.Background(), executor.Task{ID: "t", Command: cmd})
		require.NoError(t, err)
		return res
	}
	res := run(`printf '{"tokens_in": 1200, "tokens_out": 340, "cost_usd": 0.0125, "value_score": 2}' > "$FOUNDRY_RESULT_FILE"`)
	require.True(t, res.Succeeded)
	require.Equal(t, int64(1200), *res.Report.TokensIn)
	require.Equal(t, int64(340), *res.Report.TokensOut)
	require.Equal(t, 0.0125, *res.Report.CostUSD)
	require.Equal(t, 2.0, *res.Report.ValueScore)
	require.Nil(t, res.Report.ResourceCost, "not reported")

	res = run(`echo 'not json' > "$FOUNDRY_RESULT_FILE"; exit 1`)
	require.False(t, res.Succeeded)
	require.Equal(t, executor.Report{}, res.Report)
	require.Equal(t, executor.Report{}, run(`true`).Report)
}

func TestExecFailureIsClassified(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ cmd, category, summary string }{
		{`echo "--- FAIL: TestX" >&2; echo "expected 1 got 2"; exit 1`, task.CategoryValidationFailure, "--- FAIL: TestX"},
		{`echo "HTTP 429 Too Many Requests"; exit 3`, task.CategoryProviderError, "HTTP 429 Too Many Requests"},
		{`echo "weird"; exit 2`, task.CategoryExecutorCrash, "weird"},
		{`exit 4`, task.CategoryExecutorCrash, "exit status 4"},
	} {
		res, err := executor.Exec{Timeout: 10 * time.Second}.Run(context.Background(), executor.Task{ID: "t", Command: c.cmd})
		require.NoError(t, err)
		require.False(t, res.Succeeded, c.cmd)
		require.Equal(t, c.category, res.Category, c.cmd)
		require.Equal(t, c.summary, res.Summary, c.cmd)
		require.NotEmpty(t, res.Output)
	}
}

func TestExecTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res, err := executor.Exec{Timeout: 300 * time.Millisecond}.Run(context.Background(), executor.Task{
		ID: "t", Command: `echo started; sleep 30 & sleep 30; echo never`,
	})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 20*time.Second, "the background child did not keep the run alive")
	require.False(t, res.Succeeded)
	require.Equal(t, task.CategoryTimeout, res.Category)
	require.True(t, strings.HasPrefix(res.Output, "started\n"), res.Output)
	require.NotContains(t, res.Output, "never")
}

func TestExecKeepsTheTail(t *testing.T) {
	t.Parallel()
	res, err := executor.Exec{Timeout: 10 * time.Second}.Run(context.Background(), executor.Task{
		ID: "t", Command: `head -c 200000 /dev/zero | tr '\0' 'a'; echo; echo LAST`,
	})
	require.NoError(t, err)
	require.True(t, res.Succeeded)
	require.LessOrEqual(t, len(res.Output), executor.MaxOutput+len("…"))
	require.True(t, strings.HasSuffix(res.Output, "LAST\n"))
	require.True(t, strings.HasPrefix(res.Output, "…"))
}

func TestExecNeedsACommand(t *testing.T) {
	t.Parallel()
	_, err := executor.Exec{}.Run(context.Background(), executor.Task{ID: "t"})
	require.Error(t, err)
}

// reader answers statuses in sequence.
type reader struct {
	mu  sync.Mutex
	seq []executor.Status
	err error
}

func (r *reader) TaskStatus(context.Context, string) (executor.Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return executor.Status{}, r.err
	}
	s := r.seq[0]
	if len(r.seq) > 1 {
		r.seq = r.seq[1:]
	}
	return s, nil
}

func TestExternalWaitsForTheWorker(t *testing.T) {
	t.Parallel()
	r := &reader{seq: []executor.Status{{Status: "pending"}, {Status: "running"}, {Status: "completed", Output: "ok", Duration: time.Second}}}
	res, err := executor.External{Tasks: r, Poll: time.Millisecond, Timeout: 10 * time.Second}.Run(context.Background(), executor.Task{ID: "t"})
	require.NoError(t, err)
	require.Equal(t, executor.Result{Succeeded: true, Output: "ok", Duration: time.Second, Finished: true}, res)

	r = &reader{seq: []executor.Status{{Status: "failed", Summary: "boom", Category: task.CategoryExecutorCrash}}}
	res, err = executor.External{Tasks: r, Poll: time.Millisecond}.Run(context.Background(), executor.Task{ID: "t"})
	require.NoError(t, err)
	require.False(t, res.Succeeded)
	require.Equal(t, "boom", res.Summary)
	require.True(t, res.Finished)

	r = &reader{seq: []executor.Status{{Status: "pending"}}}
	res, err = executor.External{Tasks: r, Poll: time.Millisecond, Timeout: 20 * time.Millisecond}.Run(context.Background(), executor.Task{ID: "t"})
	require.NoError(t, err)
	require.False(t, res.Finished, "nobody finished it: the loop records the timeout")
	require.Equal(t, task.CategoryTimeout, res.Category)

	_, err = executor.External{Tasks: &reader{err: errors.New("down")}}.Run(context.Background(), executor.Task{ID: "t"})
	require.Error(t, err)
}
