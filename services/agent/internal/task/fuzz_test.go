package task_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/fault"
)

var (
	statuses   = []string{"pending", "running", "completed", "failed", "timed_out", "needs_decision"}
	types      = []string{"spec", "impl", "test", "review", "heal", "code-review", "merge", "deploy", "verify", "reflect"}
	categories = []string{"timeout", "executor_crash", "provider_error", "validation_failure", "unknown"}
)

// FuzzParse checks statuses, task types and error categories are accepted
// exactly as the API spells them, and nothing else.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"pending", "Pending", "timed_out", "code-review", "code_review", "unknown", "", " spec", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, ok := task.ParseStatus(s)
		require.Equal(t, slices.Contains(statuses, s), ok, "status %q", s)
		if ok {
			require.Equal(t, s, string(st))
		}
		ty, ok := task.ParseType(s)
		require.Equal(t, slices.Contains(types, s), ok, "type %q", s)
		if ok {
			require.Equal(t, s, string(ty))
		}
		require.Equal(t, slices.Contains(categories, s), task.ValidCategory(s), "category %q", s)
	})
}

// FuzzDiagnose checks the failure rule: a failure needs a summary or some
// output (a 422 on both fields otherwise); the summary recorded is
// non-empty, without leading space, at most MaxSummary characters and taken from what
// was sent; the category is the one given or, when none, one of the five.
func FuzzDiagnose(f *testing.F) {
	f.Add("", "", "panic: boom\n\tstack")
	f.Add("tests failed", "", "")
	f.Add("", "timeout", "  \n\t ")
	f.Add(" ", "", "")
	f.Add(strings.Repeat("é", 600), "bogus", "x")
	f.Add("", "", "\n\n"+strings.Repeat("x", 700)+"\nsecond")
	f.Add("", "", "\xff\xfe")
	f.Fuzz(func(t *testing.T, summary, category, output string) {
		d, err := task.Diagnose(summary, category, output)
		if strings.TrimSpace(summary) == "" && strings.TrimSpace(output) == "" {
			fe, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, fault.Invalid, fe.Kind)
			require.Len(t, fe.Fields, 2)
			return
		}
		require.NoError(t, err)
		require.NotEmpty(t, d.Summary)
		// Trimmed before the cut, so only the start is sure to be trimmed.
		require.Equal(t, strings.TrimLeftFunc(d.Summary, unicode.IsSpace), d.Summary)
		require.LessOrEqual(t, utf8.RuneCountInString(d.Summary), task.MaxSummary)
		source := strings.TrimSpace(summary)
		if source == "" {
			source = output
		}
		require.True(t, strings.Contains(source, d.Summary) || !utf8.ValidString(source),
			"summary %q does not come from %q", d.Summary, source)
		if category != "" {
			require.Equal(t, category, d.Category)
		} else {
			require.Contains(t, categories, d.Category)
		}
	})
}

// FuzzClaim checks the claim rule: a worker id is required; a pending
// task goes to the claimant; a running task only to the worker holding it
// (a retried claim); a finished or waiting task is a 409.
func FuzzClaim(f *testing.F) {
	f.Add(uint8(0), "w1", "w1")
	f.Add(uint8(1), "w1", "w2")
	f.Add(uint8(1), "w1", "w1")
	f.Add(uint8(2), "", " ")
	f.Add(uint8(5), "", "w")
	f.Fuzz(func(t *testing.T, status uint8, holder, worker string) {
		cur := task.Statuses[int(status)%len(task.Statuses)]
		err := task.Claim(cur, holder, worker)
		switch {
		case strings.TrimSpace(worker) == "":
			require.Equal(t, fault.Invalid, fault.KindOf(err))
		case cur == task.Pending, cur == task.Running && holder == worker:
			require.NoError(t, err)
		default:
			require.Equal(t, fault.Conflict, fault.KindOf(err))
		}
	})
}
