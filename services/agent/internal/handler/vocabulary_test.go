package handler

import (
	"testing"

	"github.com/stretchr/testify/require"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// TestStatusesAreTheEnumsWords pins the rules' task statuses to the API's
// TaskStatus enum: the same words in the same order, each mapping there and
// back.
func TestStatusesAreTheEnumsWords(t *testing.T) {
	t.Parallel()
	require.Len(t, agentv1.TaskStatus_name, len(task.Statuses)+1, "the enum has the statuses and its zero")
	for i, s := range task.Statuses {
		e := status(s)
		require.Equal(t, agentv1.TaskStatus(i+1), e, "status %s is the enum's value %d", s, i+1)
		require.Equal(t, string(s), wire.Word(agentv1.TaskStatus_name, e))
	}
	require.Equal(t, agentv1.TaskStatus_task_status_unspecified, status("lost"))
}
