package handler

import (
	"context"
	"net/http"

	"google.golang.org/protobuf/types/known/wrapperspb"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

func promptPB(p store.Prompt) *agentv1.AgentPrompt {
	return &agentv1.AgentPrompt{Name: p.Name, Version: int32(p.Version), TaskType: string(p.Type), Text: p.Text,
		CreatedAt: wire.Time(p.CreatedAt), Versions: int32(p.Versions)}
}

// CreatePrompt implements AgentService.CreatePrompt: 201 with the prompt.
func (h *Handler) CreatePrompt(ctx context.Context, req *agentv1.CreatePromptRequest) (*agentv1.CreatePromptResponse, error) {
	p, err := h.uc.CreatePrompt(ctx, usecase.NewPrompt{Name: req.GetName(), Type: req.GetTaskType(), Text: req.GetText(),
		Version: int(req.GetVersion())})
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &agentv1.CreatePromptResponse{Prompt: promptPB(p)}, nil
}

// ListPrompts implements AgentService.ListPrompts.
func (h *Handler) ListPrompts(ctx context.Context, req *agentv1.ListPromptsRequest) (*agentv1.ListPromptsResponse, error) {
	ps, err := h.uc.Prompts(ctx, req.GetTaskType())
	if err != nil {
		return nil, err
	}
	out := &agentv1.ListPromptsResponse{Prompts: make([]*agentv1.AgentPrompt, len(ps))}
	for i, p := range ps {
		out.Prompts[i] = promptPB(p)
	}
	return out, nil
}

// GetPrompt implements AgentService.GetPrompt.
func (h *Handler) GetPrompt(ctx context.Context, req *agentv1.GetPromptRequest) (*agentv1.GetPromptResponse, error) {
	version := 0
	if req.Version != nil {
		version = int(req.GetVersion())
		if version == 0 {
			version = -1 // given 0 is out of range, not the newest
		}
	}
	p, err := h.uc.Prompt(ctx, req.GetName(), version)
	if err != nil {
		return nil, err
	}
	return &agentv1.GetPromptResponse{Prompt: promptPB(p)}, nil
}

func optVersion(v int) *wrapperspb.Int32Value {
	if v == 0 {
		return nil
	}
	return wrapperspb.Int32(int32(v))
}
