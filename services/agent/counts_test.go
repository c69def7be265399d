package agent

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/agent/internal/handler"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestTaskCountsPastTwoToThe31: the task counts are kept counters
// (task_counts, BIGINT), and the API carries them whole past 2^31, on
// both engines: they were int32 in the API, so three billion completed
// tasks read back negative.
func TestTaskCountsPastTwoToThe31(t *testing.T) {
	t.Parallel()
	const completed, pending = 3_000_000_000, 1<<31 + 1
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "agent", store.Migrations())
		_, err := db.Exec(ctx, `INSERT INTO task_counts (status, task_type, n) VALUES
			('completed', 'spec', $1), ('pending', 'impl', $2)`, int64(completed), int64(pending))
		require.NoError(t, err)
		h := handler.New(usecase.New(db, repos, usecase.Config{}), nil, 0)

		counts, err := h.CountTasks(ctx, &agentv1.CountTasksRequest{})
		require.NoError(t, err)
		require.Equal(t, int64(completed+pending), counts.GetTotal())
		require.Equal(t, int64(completed), counts.GetByStatus()["completed"])
		require.Equal(t, int64(pending), counts.GetByStatus()["pending"])

		status, err := h.GetPipelineStatus(ctx, &agentv1.GetPipelineStatusRequest{})
		require.NoError(t, err)
		require.Equal(t, int64(completed), status.GetCompleted())
		require.Equal(t, int64(pending), status.GetPending())
		require.Equal(t, int64(completed+pending), status.GetTotal())
	})
}
