package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// TestCreateWithIdempotencyKey: a client that lost the answer to a create
// sends it again with the same key and gets the same task; one task exists.
func TestCreateWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		key := &idempotency.Request{Scope: "task:any", Key: "k1", Hash: "h1"}
		in := usecase.NewTask{Direction: "write it", Type: "spec", Context: map[string]any{"idea_id": "idea-1"}, Key: key}

		first, err := e.app.Create(ctx, in)
		require.NoError(t, err)
		require.Equal(t, "task-0001", first.ID)
		again, err := e.app.Create(ctx, in)
		require.NoError(t, err)
		require.Equal(t, first, again, "a retry answers the task the first request created")

		in.Key = &idempotency.Request{Scope: "task:any", Key: "k1", Hash: "h2"}
		_, err = e.app.Create(ctx, in)
		requireKind(t, fault.Invalid, err)

		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts.Total, "one task, however often it was asked for")

		in.Key = &idempotency.Request{Scope: "task:any", Key: "k2", Hash: "h1"}
		other, err := e.app.Create(ctx, in)
		require.NoError(t, err)
		require.Equal(t, "task-0004", other.ID, "another key creates another task (ids 2 and 3 went to the retry and the refusal)")
	})
}

// TestClaimWithIdempotencyKey: a retried claim answers the task the first
// claimed, and does not claim a second one; a claim that found nothing
// answers nothing again.
func TestClaimWithIdempotencyKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		empty := &idempotency.Request{Scope: "claim:w1", Key: "empty", Hash: "h"}
		_, ok, err := e.app.Claim(ctx, task.Reporter{}, "w1", nil, nil, empty)
		require.NoError(t, err)
		require.False(t, ok)

		a := e.create(t, "spec", nil)
		b := e.create(t, "spec", nil)
		key := &idempotency.Request{Scope: "claim:w1", Key: "k1", Hash: "h"}
		got, ok, err := e.app.Claim(ctx, task.Reporter{}, "w1", nil, nil, key)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, a.ID, got.ID)
		again, ok, err := e.app.Claim(ctx, task.Reporter{}, "w1", nil, nil, key)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, got, again, "the retry answers the first claim")

		_, ok, err = e.app.Claim(ctx, task.Reporter{}, "w1", nil, nil, empty)
		require.NoError(t, err)
		require.False(t, ok, "the key that found nothing answers nothing again")

		left, err := e.app.Get(ctx, b.ID)
		require.NoError(t, err)
		require.Equal(t, task.Pending, left.Status, "no retry claimed the second task")
		require.Equal(t, 0, left.Attempts)
		first, err := e.app.Get(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, 1, first.Attempts, "claimed once")
	})
}

// TestIdempotencyKeysLastTheirRetention: a key's record is pruned once
// past its retention (PruneIdempotencyKeys, the retention runner's
// prune), and a retry with it then creates again; a younger key stays.
func TestIdempotencyKeysLastTheirRetention(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		old := usecase.NewTask{Direction: "write it", Type: "spec", Key: &idempotency.Request{Scope: "task:any", Key: "old", Hash: "h"}}
		first, err := e.app.Create(ctx, old)
		require.NoError(t, err)
		e.clock.Advance(8 * 24 * time.Hour)
		young := usecase.NewTask{Direction: "write it", Type: "spec", Key: &idempotency.Request{Scope: "task:any", Key: "young", Hash: "h"}}
		kept, err := e.app.Create(ctx, young)
		require.NoError(t, err)

		n, err := e.app.PruneIdempotencyKeys(ctx, e.clock.Now().Add(-usecase.DefaultIdempotencyRetention), 10)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "the week-old key")
		again, err := e.app.Create(ctx, old)
		require.NoError(t, err)
		require.NotEqual(t, first.ID, again.ID, "past its retention the key runs again")
		same, err := e.app.Create(ctx, young)
		require.NoError(t, err)
		require.Equal(t, kept.ID, same.ID, "a young key still answers its first request")
	})
}
