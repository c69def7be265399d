package usecase

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// FuzzValidateNew checks a create request: an accepted one has a
// non-blank direction within its length, a known task type, and a context
// that is a JSON object within MaxContext bytes holding exactly what was
// sent, with idea_id and prompt_variant read from it as non-blank strings
// within their lengths; every refusal is a 422. The context arrives as the
// gateway's JSON becomes it: a protobuf Struct.
func FuzzValidateNew(f *testing.F) {
	f.Add("fix the bug", "impl", []byte(`{"idea_id":"i1","prompt_variant":"v2","n":[1,{"x":null}]}`))
	f.Add(" ", "spec", []byte(`{}`))
	f.Add("d", "Impl", []byte(`{"idea_id":1}`))
	f.Add("d", "review", []byte(`{"idea_id":"  ","prompt_variant":null}`))
	f.Add("d", "test", []byte(`{"prompt_variant":"`+strings.Repeat("v", 101)+`"}`))
	f.Add("d", "verify", []byte(`{"big":"`+strings.Repeat("x", MaxContext)+`"}`))
	f.Add(strings.Repeat("é", MaxDirection+1), "deploy", []byte(`null`))
	f.Fuzz(func(t *testing.T, direction, typ string, contextJSON []byte) {
		var c map[string]any
		if string(contextJSON) != "null" {
			var s structpb.Struct
			if err := s.UnmarshalJSON(contextJSON); err != nil {
				return
			}
			c = s.AsMap()
		}
		gotType, ideaID, variant, raw, err := validateNew(NewTask{Direction: direction, Type: typ, Context: c})
		if err != nil {
			fe, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, fault.Invalid, fe.Kind)
			return
		}
		require.NotEmpty(t, strings.TrimSpace(direction))
		require.LessOrEqual(t, utf8.RuneCountInString(direction), MaxDirection)
		require.Equal(t, typ, string(gotType))
		require.LessOrEqual(t, len(raw), MaxContext)
		var back map[string]any
		require.NoError(t, json.Unmarshal([]byte(raw), &back))
		if c == nil {
			c = map[string]any{}
		}
		require.Equal(t, c, back, "the stored context is the one sent")
		for key, got := range map[string]string{"idea_id": ideaID, "prompt_variant": variant} {
			v, present := c[key]
			if !present || v == nil {
				require.Empty(t, got)
				continue
			}
			require.Equal(t, v, got)
			require.NotEmpty(t, strings.TrimSpace(got))
		}
		require.LessOrEqual(t, utf8.RuneCountInString(ideaID), MaxIdeaID)
		require.LessOrEqual(t, utf8.RuneCountInString(variant), MaxVariant)
	})
}

// opt returns a pointer to v when present, else nil.
func opt[T any](present bool, v T) *T {
	if !present {
		return nil
	}
	return &v
}

// FuzzPatch checks a task PATCH through both of its rules: validate
// refuses bad fields as a 422 (an empty patch as a 400), and apply never
// moves a finished task, keeps a running task with its worker, refuses
// with a 409 or a 422 leaving the task as it was, and leaves every
// accepted task consistent (a running task has a worker and a live lease,
// a failed one a short summary and a known category, a finished one its
// completion time).
func FuzzPatch(f *testing.F) {
	f.Add(uint8(0), "", "running", "", "", "", "w1", 0.0, uint16(0b1000001))
	f.Add(uint8(1), "w1", "failed", "panic: x", "", "", "", 50.0, uint16(0b10))
	f.Add(uint8(1), "w1", "running", "", "", "", "w2", 0.0, uint16(0b1000001))
	f.Add(uint8(1), "w1", "timed_out", "", "", "timeout", "", 0.0, uint16(0b10001))
	f.Add(uint8(2), "w1", "completed", "", "", "", "", 100.0, uint16(0b1))
	f.Add(uint8(0), "", "failed", "  ", " ", "bogus", "", math.NaN(), uint16(0xffff))
	f.Add(uint8(5), "w1", "pending", "", "", "", "w1", 101.0, uint16(0b1000101))
	f.Add(uint8(0), "", "", "", "", "", "", 0.0, uint16(0))
	f.Fuzz(func(t *testing.T, from uint8, holder, status, output, summary, category, worker string, progress float64, present uint16) {
		now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		cur := store.Task{ID: "t1", Direction: "d", Type: task.Impl, Status: task.Statuses[int(from)%len(task.Statuses)],
			CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour)}
		if cur.Status == task.Running || holder != "" {
			cur.WorkerID, cur.StartedAt, cur.LeaseSeconds = holder, now.Add(-time.Minute), 60
			cur.LeaseExpiresAt = now.Add(time.Minute)
		}
		// Each bit of present says whether a field is in the patch.
		p := Patch{
			Status: opt(present&1 != 0, status), Output: opt(present&2 != 0, output), ProgressPct: opt(present&4 != 0, progress),
			ErrorSummary: opt(present&8 != 0, summary), ErrorCategory: opt(present&16 != 0, category),
			CurrentStep: opt(present&32 != 0, output), WorkerID: opt(present&64 != 0, worker),
			ValueScore: opt(present&128 != 0, progress), DecisionPrompt: opt(present&256 != 0, summary),
		}
		if err := p.validate(); err != nil {
			want := fault.Invalid
			if p.Empty() {
				want = fault.Rejected
			}
			require.Equal(t, want, fault.KindOf(err), "%v", err)
			return
		}
		next, err := (&App{}).apply(cur, p, 5*time.Minute, now)
		if err != nil {
			require.Contains(t, []fault.Kind{fault.Invalid, fault.Conflict}, fault.KindOf(err), "%v", err)
			require.Equal(t, cur, next, "a refused patch leaves the task as it was")
			return
		}
		if cur.Status.Finished() {
			require.Equal(t, cur, next, "a finished task does not change")
			return
		}
		if cur.Status == task.Running && p.WorkerID != nil {
			require.Equal(t, cur.WorkerID, next.WorkerID, "a running task keeps its worker")
		}
		switch next.Status {
		case task.Running:
			require.NotEmpty(t, strings.TrimSpace(next.WorkerID))
			require.True(t, next.LeaseExpiresAt.After(now))
		case task.Pending:
			require.Empty(t, next.WorkerID)
			require.True(t, next.LeaseExpiresAt.IsZero())
		case task.Failed, task.TimedOut:
			require.NotEmpty(t, next.ErrorSummary)
			require.LessOrEqual(t, utf8.RuneCountInString(next.ErrorSummary), task.MaxSummary)
			require.True(t, task.ValidCategory(next.ErrorCategory), "category %q", next.ErrorCategory)
		}
		if next.Status.Finished() {
			require.Equal(t, now, next.CompletedAt)
			require.NotNil(t, next.Duration)
			require.GreaterOrEqual(t, *next.Duration, 0.0)
		}
		require.Equal(t, now, next.UpdatedAt)
	})
}
