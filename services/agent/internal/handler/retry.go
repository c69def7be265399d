package handler

import (
	"context"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// RetryTask implements AgentService.RetryTask.
func (h *Handler) RetryTask(ctx context.Context, req *agentv1.RetryTaskRequest) (*agentv1.RetryTaskResponse, error) {
	t, err := h.uc.Retry(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	p, err := toProto(t)
	if err != nil {
		return nil, err
	}
	return &agentv1.RetryTaskResponse{Task: p}, nil
}

// CancelTask implements AgentService.CancelTask.
func (h *Handler) CancelTask(ctx context.Context, req *agentv1.CancelTaskRequest) (*agentv1.CancelTaskResponse, error) {
	t, err := h.uc.Cancel(ctx, req.GetId(), req.GetReason())
	if err != nil {
		return nil, err
	}
	p, err := toProto(t)
	if err != nil {
		return nil, err
	}
	return &agentv1.CancelTaskResponse{Task: p}, nil
}

// RetryTasks implements AgentService.RetryTasks.
func (h *Handler) RetryTasks(ctx context.Context, req *agentv1.RetryTasksRequest) (*agentv1.RetryTasksResponse, error) {
	r, err := h.uc.RetryMany(ctx, usecase.RetryFilter{Status: wire.Word(agentv1.TaskStatus_name, req.GetStatus()),
		Type: req.GetTaskType(), IdeaID: req.GetIdeaId(), Limit: optInt(req.Limit)})
	if err != nil {
		return nil, err
	}
	out := &agentv1.RetryTasksResponse{Retried: toItems(r.Tasks), Skipped: make([]*agentv1.SkippedTask, len(r.Skipped))}
	for i, s := range r.Skipped {
		out.Skipped[i] = &agentv1.SkippedTask{TaskId: s.TaskID, Detail: s.Detail}
	}
	return out, nil
}
