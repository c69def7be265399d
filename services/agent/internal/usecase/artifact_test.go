package usecase_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestArtifactsAreKeptWithTheTask: a worker's artifact (a text or a URL)
// is stored with the task and answered with it, at most MaxArtifact
// bytes; a failed attempt's artifact goes with its output when the task
// is retried, so the next attempt starts clean.
func TestArtifactsAreKeptWithTheTask(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine, retrying)
		tk := e.create(t, "impl", nil)

		_, err := e.app.Update(ctx, tk.ID, usecase.Patch{Artifact: ptr(strings.Repeat("a", usecase.MaxArtifact+1))})
		fe, ok := fault.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, fault.Invalid, fe.Kind)
		require.Equal(t, []fault.FieldError{{Field: "artifact", Message: "must be at most 65536 bytes: a text or a URL to what is larger"}}, fe.Fields)

		_, ok, err = e.app.Claim(ctx, task.Reporter{}, "w1", []string{"impl"}, nil, nil)
		require.NoError(t, err)
		require.True(t, ok)
		failed := e.patch(t, tk.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("HTTP 429"), Artifact: ptr("half a patch")})
		require.Equal(t, "half a patch", failed.Artifact, "kept with the failed attempt")
		e.clock.Advance(time.Hour)
		_, err = e.app.Reap(ctx)
		require.NoError(t, err)
		back, err := e.app.Get(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, task.Pending, back.Status)
		require.Empty(t, back.Artifact, "the retry starts without the failed attempt's artifact")

		_, ok, err = e.app.Claim(ctx, task.Reporter{}, "w1", []string{"impl"}, nil, nil)
		require.NoError(t, err)
		require.True(t, ok)
		whole := strings.Repeat("é", usecase.MaxArtifact/2)
		done := e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed"), Output: ptr("merged"), Artifact: &whole, WorkerID: ptr("w1")})
		require.Equal(t, whole, done.Artifact, "MaxArtifact bytes are taken")
		got, err := e.app.Get(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, whole, got.Artifact)
		same := e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed"), Output: ptr("merged"), Artifact: &whole})
		require.Equal(t, done, same, "repeating the finishing PATCH answers the task unchanged")
		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{Artifact: ptr("another")})
		require.Equal(t, fault.Conflict, fault.KindOf(err), "a finished task's artifact does not change")
	})
}
