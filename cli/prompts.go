package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
)

var (
	opCreatePrompt = op{grpc: agentv1.AgentService_CreatePrompt_FullMethodName, http: "POST /api/agent/prompts", out: "prompt",
		cred: credAdmin}
	opListPrompts = op{grpc: agentv1.AgentService_ListPrompts_FullMethodName, http: "GET /api/agent/prompts"}
	opGetPrompt   = op{grpc: agentv1.AgentService_GetPrompt_FullMethodName, http: "GET /api/agent/prompts/{name}", out: "prompt"}
)

func (e *env) promptsCommand() *cobra.Command {
	return group("prompts", "Store, list and show the agents' prompt templates", withIDs(e.promptsList(), "prompts.name"),
		withIDs(e.promptsShow(), "name"), withIDs(e.promptsCreate(), "name"))
}

func (e *env) promptsList() *cobra.Command {
	req := &agentv1.ListPromptsRequest{}
	cmd := &cobra.Command{Use: "list", Short: "List the newest version of every stored prompt", Args: cobra.NoArgs}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		resp := &agentv1.ListPromptsResponse{}
		raw, err := e.client.call(ctx, opListPrompts, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		rows := make([][]string, len(resp.GetPrompts()))
		for i, p := range resp.GetPrompts() {
			rows[i] = []string{p.GetName(), p.GetTaskType(), formatFloat(float64(p.GetVersion())), formatFloat(float64(p.GetVersions())),
				truncate(p.GetText(), 60)}
		}
		return e.table([]string{"NAME", "TYPE", "VERSION", "VERSIONS", "TEXT"}, rows)
	})
	choiceVar(cmd, &req.TaskType, "type", taskTypes, "only prompts of this task type")
	return cmd
}

func (e *env) promptsShow() *cobra.Command {
	var version int32
	cmd := &cobra.Command{Use: "show NAME", Short: "Show a prompt (its newest version, or --version)", Args: args("NAME")}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		req := &agentv1.GetPromptRequest{Name: a[0]}
		if cmd.Flags().Changed("version") {
			req.Version = proto.Int32(version)
		}
		raw, err := e.client.call(ctx, opGetPrompt, req, &agentv1.GetPromptResponse{}, callOpts{})
		return e.object(raw, err)
	})
	cmd.Flags().Int32Var(&version, "version", 0, "the version to show (default: the newest)")
	return cmd
}

func (e *env) promptsCreate() *cobra.Command {
	var (
		text, file string
		version    int32
	)
	req := &agentv1.CreatePromptRequest{}
	cmd := &cobra.Command{
		Use:   "create NAME --type T (--text TEXT | --file F)",
		Short: "Store a version of a prompt template for a task type (operator)",
		Long: `Store the next version of a prompt: a template of one task type, whose name
is its A/B variant. {{task_type}}, {{direction}}, {{instruction}}, {{idea.id}},
{{idea.name}}, {{idea.description}}, {{stage}} and {{previous}} are filled in
for each task.`,
		Args: args("NAME"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		f := cmd.Flags()
		switch {
		case f.Changed("text") == f.Changed("file"):
			return usagef("give the template as --text or --file, one of them")
		case f.Changed("file"):
			b, err := os.ReadFile(file)
			if err != nil {
				return usagef("--file: %v", err)
			}
			text = string(b)
		}
		req.Name, req.Text = a[0], text
		if f.Changed("version") {
			req.Version = proto.Int32(version)
		}
		raw, err := e.client.call(ctx, opCreatePrompt, req, &agentv1.CreatePromptResponse{}, callOpts{})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	choiceVar(cmd, &req.TaskType, "type", taskTypes, "the task type the prompt is for (required)")
	f.StringVar(&text, "text", "", "the template")
	f.StringVar(&file, "file", "", "read the template from this file")
	f.Int32Var(&version, "version", 0, "the version to store (default: the next)")
	return cmd
}
