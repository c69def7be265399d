package task_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestClassifyFirstMatchWins(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ output, want string }{
		{"context deadline exceeded while waiting", task.CategoryTimeout},
		{"Command timed out after 600s\npanic: oops", task.CategoryTimeout},
		{"panic: runtime error: index out of range", task.CategoryExecutorCrash},
		{"process exited with code 137 (killed)", task.CategoryExecutorCrash},
		{"HTTP 429 Too Many Requests from the model API", task.CategoryProviderError},
		{"provider overloaded, retry later", task.CategoryProviderError},
		{"--- FAIL: TestThing\nexpected 3, got 4", task.CategoryValidationFailure},
		{"schema validation failed: name is required", task.CategoryValidationFailure},
		{"something odd happened", task.CategoryUnknown},
		{"", task.CategoryUnknown},
	} {
		require.Equal(t, c.want, task.Classify(c.output), c.output)
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	require.Equal(t, "first real line", task.Summarize("\n   \n  first real line  \nsecond"))
	require.Equal(t, "", task.Summarize(" \n\t\n"))
	long := strings.Repeat("é", 600)
	got := task.Summarize(long)
	require.Equal(t, task.MaxSummary, len([]rune(got)), "cut to 500 characters, not bytes")
}

func TestDiagnose(t *testing.T) {
	t.Parallel()
	_, err := task.Diagnose("", "", "  \n ")
	require.Equal(t, fault.Invalid, fault.KindOf(err), "empty summary and output is a 422")
	fe, _ := fault.As(err)
	require.Len(t, fe.Fields, 2)

	d, err := task.Diagnose("", "", "\nError: request timed out\nmore")
	require.NoError(t, err)
	require.Equal(t, task.Diagnosis{Summary: "Error: request timed out", Category: task.CategoryTimeout}, d)

	d, err = task.Diagnose("tests failed", "", "")
	require.NoError(t, err)
	require.Equal(t, task.Diagnosis{Summary: "tests failed", Category: task.CategoryValidationFailure}, d)

	d, err = task.Diagnose("boom", task.CategoryProviderError, "")
	require.NoError(t, err)
	require.Equal(t, task.CategoryProviderError, d.Category, "a given category is kept")
}

func TestClaimRule(t *testing.T) {
	t.Parallel()
	require.NoError(t, task.Claim(task.Pending, "", "w1"))
	require.NoError(t, task.Claim(task.Running, "w1", "w1"), "a retried claim by the same worker")
	require.Equal(t, fault.Conflict, fault.KindOf(task.Claim(task.Running, "w1", "w2")))
	require.Equal(t, fault.Conflict, fault.KindOf(task.Claim(task.Completed, "w1", "w2")))
	require.Equal(t, fault.Invalid, fault.KindOf(task.Claim(task.Pending, "", " ")))
}

func TestAdvances(t *testing.T) {
	t.Parallel()
	for _, typ := range []task.Type{task.Spec, task.Impl, task.Test, task.Review} {
		require.True(t, typ.Advances(), typ)
	}
	require.False(t, task.Heal.Advances())
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, s := range task.Statuses {
		got, ok := task.ParseStatus(string(s))
		require.True(t, ok)
		require.Equal(t, s, got)
	}
	_, ok := task.ParseStatus("done")
	require.False(t, ok)
	for _, ty := range task.Types {
		got, ok := task.ParseType(string(ty))
		require.True(t, ok)
		require.Equal(t, ty, got)
	}
	_, ok = task.ParseType("Spec")
	require.False(t, ok)
	require.True(t, task.Failed.NeedsAttention())
	require.True(t, task.NeedsDecision.NeedsAttention())
	require.False(t, task.Pending.NeedsAttention())
	require.True(t, task.TimedOut.Finished())
	require.False(t, task.NeedsDecision.Finished())
}

func TestReporter(t *testing.T) {
	t.Parallel()
	w1, w2 := task.Reporter{ID: "t1"}, task.Reporter{ID: "t2"}
	require.NoError(t, w1.CheckReport("t1", false), "the claimer")
	require.NoError(t, w1.CheckReport("", true), "claiming a free task")
	require.Equal(t, fault.Forbidden, fault.KindOf(w2.CheckReport("t1", false)), "another worker")
	require.Equal(t, fault.Forbidden, fault.KindOf(w2.CheckReport("t1", true)), "claiming another's task")
	require.Equal(t, fault.Forbidden, fault.KindOf(w1.CheckReport("", false)), "reporting on a free task")
	require.NoError(t, task.Reporter{ID: "op", Operator: true}.CheckReport("t1", false), "an operator")
	require.NoError(t, task.Reporter{}.CheckReport("t1", false), "Foundry itself")
}
