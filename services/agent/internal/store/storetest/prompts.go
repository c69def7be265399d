package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// runPrompts checks the prompt A/B records: one outcome per task, and
// each variant's running record, locked while a use case adds to it.
func runPrompts(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("an outcome is recorded once per task", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		record := func(o store.Outcome) bool {
			t.Helper()
			var added bool
			require.NoError(t, h.write(func(r repos) (err error) {
				added, err = r.prompts.RecordOutcome(ctx, o)
				return err
			}))
			return added
		}
		first := store.Outcome{TaskID: "t1", Variant: "v1", ValueScore: 0.75, ResourceCost: 1.5, CreatedAt: at(time.Microsecond)}
		require.True(t, record(first))
		require.False(t, record(store.Outcome{TaskID: "t1", Variant: "v2", ValueScore: 0, CreatedAt: at(time.Hour)}),
			"the task has its outcome")
		require.True(t, record(store.Outcome{TaskID: "t2", Variant: "v1", CreatedAt: base}))

		var stored store.Outcome
		var created int64
		require.NoError(t, h.DB.QueryRow(ctx, `SELECT task_id, variant, value_score, resource_cost, created_at
			FROM prompt_outcomes WHERE task_id = 't1'`).Scan(&stored.TaskID, &stored.Variant, &stored.ValueScore, &stored.ResourceCost, &created))
		stored.CreatedAt = database.Time(created)
		require.Equal(t, first, stored, "the first outcome, unchanged")
	})

	t.Run("a variant's record starts at zero, is saved, and is listed by variant", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		arms := func() []abtest.Arm {
			t.Helper()
			got, err := h.read().prompts.Arms(ctx)
			require.NoError(t, err)
			return got
		}
		require.Equal(t, []abtest.Arm{}, arms(), "none: empty, not nil")

		var arm abtest.Arm
		require.NoError(t, h.write(func(r repos) (err error) {
			arm, err = r.prompts.LockArm(ctx, "v2")
			return err
		}))
		require.Equal(t, abtest.Arm{Variant: "v2"}, arm, "a variant without a record: a zero record")
		require.Equal(t, []abtest.Arm{{Variant: "v2"}}, arms(), "opened by the lock")

		for _, a := range []abtest.Arm{
			{Variant: "v2", Samples: 3, SumValue: 2.25, SumCost: 0.5, FirstZeros: 1},
			{Variant: "v1", Samples: 1, SumValue: 1, SumCost: 0},
		} {
			require.NoError(t, h.write(func(r repos) error {
				got, err := r.prompts.LockArm(ctx, a.Variant)
				if err != nil {
					return err
				}
				got.Samples, got.SumValue, got.SumCost, got.FirstZeros = a.Samples, a.SumValue, a.SumCost, a.FirstZeros
				return r.prompts.SaveArm(ctx, got, at(time.Minute))
			}))
		}
		require.NoError(t, h.write(func(r repos) (err error) {
			arm, err = r.prompts.LockArm(ctx, "v2")
			return err
		}))
		require.Equal(t, abtest.Arm{Variant: "v2", Samples: 3, SumValue: 2.25, SumCost: 0.5, FirstZeros: 1}, arm, "the saved record")
		require.Equal(t, []abtest.Arm{
			{Variant: "v1", Samples: 1, SumValue: 1},
			{Variant: "v2", Samples: 3, SumValue: 2.25, SumCost: 0.5, FirstZeros: 1},
		}, arms())
	})

	t.Run("LockArm holds the variant's record until the transaction ends", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		postgresOnly(t, h)
		ctx := context.Background()
		commit := hold(t, h, func(r repos) error {
			a, err := r.prompts.LockArm(ctx, "v1")
			if err != nil {
				return err
			}
			a.Samples, a.SumValue = 1, 0.5
			return r.prompts.SaveArm(ctx, a, base)
		})
		type result struct {
			arm abtest.Arm
			err error
		}
		second := make(chan result, 1)
		go func() {
			var r result
			r.err = h.write(func(rs repos) (err error) {
				r.arm, err = rs.prompts.LockArm(ctx, "v1")
				return err
			})
			second <- r
		}()
		require.Eventually(t, func() bool { return waitingForALock(t, h) }, 5*time.Second, 5*time.Millisecond,
			"a second LockArm of the variant waits")
		require.NoError(t, commit())
		got := <-second
		require.NoError(t, got.err)
		require.Equal(t, abtest.Arm{Variant: "v1", Samples: 1, SumValue: 0.5}, got.arm, "and reads the first one's record")
	})
}
