package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// The API's open vocabularies, strings in the protos (see their comments),
// so the client keeps their words here, in the API's order: choiceVar
// refuses any other before a request is sent and completes them. The
// services validate them too; TestVocabularies (e2e/cli) holds each list
// to the words the API's own refusal names, so a word added on one side
// fails a test. The closed ones (stages, task statuses) are proto enums,
// read by enumVar.
var (
	taskTypes      = []string{"spec", "impl", "test", "review", "heal", "code-review", "merge", "deploy", "verify", "reflect"}
	failCategories = []string{"timeout", "executor_crash", "provider_error", "validation_failure", "unknown"}
	tokenRoles     = []string{"viewer", "worker", "operator", "admin"}
	assetTypes     = []string{"CODE", "MODEL", "CONTENT", "DATA"}
)

// maxPage is the largest page the list routes answer; --all uses it
// unless --limit asks for smaller pages.
const maxPage = 500

// completeWith offers values for a flag.
func completeWith(cmd *cobra.Command, flag string, values []string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// args requires exactly the named positional arguments, none empty (an
// empty id would change the route it is put in).
func args(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, got []string) error {
		if len(got) != len(names) {
			return usagef("%s expects %s (got %d arguments)", cmd.CommandPath(), strings.Join(names, " "), len(got))
		}
		for i, a := range got {
			if strings.TrimSpace(a) == "" {
				return usagef("%s must not be empty", names[i])
			}
		}
		return nil
	}
}

// group is a command that only holds others: without arguments it shows
// its help; an unknown subcommand is a usage error (cobra would show the
// help and succeed).
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:                        use,
		Short:                      short,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return usageError{errors.New(msg)}
		},
	}
	cmd.AddCommand(subs...)
	return cmd
}

// --- ideas -------------------------------------------------------------------

func (e *env) ideasCommand() *cobra.Command {
	return group("ideas", "List, show, create and advance ideas, and record their impact", withIDs(e.ideasList(), "ideas.id"),
		withIDs(e.ideasShow(), "id"), withIDs(e.ideasCreate(), "id"), withIDs(e.ideasAdvance(), "id"), withIDs(e.ideasImpact(), "record.id"))
}

func (e *env) ideasList() *cobra.Command {
	var (
		limit, offset int32
		tags          []string
		unvalidated   bool
		all           bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List ideas ranked by score",
		Long: `List ideas ranked by score, highest first, one page (--limit, --offset) or,
with --all, every page (--limit is then the page size; with --json the pages
are merged into one answer of the same shape).`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		req := &portfoliov1.ListIdeasRequest{OnlyUnvalidated: unvalidated, Tags: tags, Offset: offset}
		if cmd.Flags().Changed("limit") {
			req.Limit = proto.Int32(limit)
		}
		resp := &portfoliov1.ListIdeasResponse{}
		if !all {
			raw, err := e.client.call(ctx, opListIdeas, req, resp, callOpts{})
			if err != nil || e.machine() {
				return e.orJSON(raw, err)
			}
			e.pageHint("ideas", len(resp.GetIdeas()), resp.GetPagination(), true)
			return e.ideasTable(resp.GetIdeas())
		}
		if req.Limit == nil {
			req.Limit = proto.Int32(maxPage)
		}
		merged := &portfoliov1.ListIdeasResponse{}
		seen := map[string]bool{}
		err := e.eachPage("ideas", offset, func(at int32) (int, int64, error) {
			req.Offset = at
			page := &portfoliov1.ListIdeasResponse{}
			if _, err := e.client.call(ctx, opListIdeas, req, page, callOpts{}); err != nil {
				return 0, 0, err
			}
			for _, it := range page.GetIdeas() {
				if !seen[it.GetId()] { // an idea moved across a page boundary meanwhile
					seen[it.GetId()] = true
					merged.Ideas = append(merged.Ideas, it)
				}
			}
			merged.Summary = page.GetSummary()
			merged.Pagination = &commonv1.Pagination{Total: page.GetPagination().GetTotal()}
			return len(page.GetIdeas()), page.GetPagination().GetTotal(), nil
		})
		if err != nil {
			return err
		}
		merged.Pagination.Offset = offset
		merged.Pagination.Limit = int32(len(merged.Ideas))
		if e.machine() {
			return e.printMessage(merged)
		}
		return e.ideasTable(merged.GetIdeas())
	})
	f := cmd.Flags()
	f.Int32Var(&limit, "limit", 0, "ideas per page (server default 50, at most 500)")
	f.Int32Var(&offset, "offset", 0, "ideas to skip")
	f.StringArrayVar(&tags, "tag", nil, "only ideas carrying this tag (repeat for several: all of them)")
	f.BoolVar(&unvalidated, "unvalidated", false, "only ideas not validated yet")
	f.BoolVar(&all, "all", false, "every page, not only the first")
	return cmd
}

func (e *env) ideasTable(ideas []*portfoliov1.Idea) error {
	rows := make([][]string, len(ideas))
	for i, it := range ideas {
		rows[i] = []string{it.GetId(), it.GetStage().String(), formatFloat(it.GetScore()),
			formatFloat(it.GetPotentialValue()), formatFloat(it.GetEstimatedCost()), it.GetName()}
	}
	return e.table([]string{"ID", "STAGE", "SCORE", "VALUE", "COST", "NAME"}, rows)
}

func (e *env) ideasShow() *cobra.Command {
	cmd := &cobra.Command{Use: "show IDEA_ID", Short: "Show one idea", Args: args("IDEA_ID")}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		raw, err := e.client.call(ctx, opGetIdea, &portfoliov1.GetIdeaRequest{Id: a[0]}, &portfoliov1.GetIdeaResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

func (e *env) ideasCreate() *cobra.Command {
	req := &portfoliov1.CreateIdeaRequest{}
	var confidence float64
	cmd := &cobra.Command{
		Use:     "create NAME",
		Short:   "Create an idea (at stage none unless --stage)",
		Example: `  foundry ideas create "Solar kettle" --value 100 --cost 10 --tag energy`,
		Args:    args("NAME"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		req.Name = a[0]
		if cmd.Flags().Changed("confidence") {
			req.Confidence = proto.Float64(confidence)
		}
		raw, err := e.client.call(ctx, opCreateIdea, req, &portfoliov1.CreateIdeaResponse{}, callOpts{})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.StringVar(&req.Description, "description", "", "what the idea is")
	f.Float64Var(&req.PotentialValue, "value", 0, "potential value")
	f.Float64Var(&req.EstimatedCost, "cost", 0, "estimated cost")
	f.Float64Var(&confidence, "confidence", 0.5, "confidence, 0 to 1")
	f.StringArrayVar(&req.Tags, "tag", nil, "a tag (repeat for several)")
	f.StringVar(&req.Id, "id", "", "the idea's id (default: a new UUID)")
	enumVar(cmd, &req.Stage, "stage", "initial stage (default none)")
	return cmd
}

func (e *env) ideasAdvance() *cobra.Command {
	var to portfoliov1.Stage
	cmd := &cobra.Command{
		Use:   "advance IDEA_ID",
		Short: "Move an idea to its next stage (or, with --to and the administrator key, to any stage)",
		Args:  args("IDEA_ID"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		if cmd.Flags().Changed("to") {
			raw, err := e.client.call(ctx, opSetIdeaStage, &portfoliov1.SetIdeaStageRequest{IdeaId: a[0], Stage: to},
				&portfoliov1.SetIdeaStageResponse{}, callOpts{})
			return e.object(raw, err)
		}
		raw, err := e.client.call(ctx, opAdvanceIdea, &portfoliov1.AdvanceIdeaRequest{IdeaId: a[0]}, &portfoliov1.AdvanceIdeaResponse{}, callOpts{})
		return e.object(raw, err)
	})
	enumVar(cmd, &to, "to", "set this stage explicitly (administrator key required)")
	return cmd
}

// ideasImpact lists an idea's impact records or, with --usage or --usd,
// records one.
func (e *env) ideasImpact() *cobra.Command {
	req := &ledgerv1.RecordImpactRequest{}
	var limit, offset int32
	cmd := &cobra.Command{
		Use:   "impact IDEA_ID [--usage QUANTITY --unit UNIT | --usd AMOUNT] --evidence TEXT --reference REF",
		Short: "List an idea's impact records, or record usage (a worker or operator) or revenue (administrator)",
		Long: `Without --usage or --usd, list the idea's impact records, newest first, with
their totals. With --usage and --unit, record measured usage: it grows the
attribution of every position staked on the idea now. With --usd, record
revenue the idea brought (administrator): the treasury grows, CC is minted
at the buy rate and paid to the stakers in proportion to the attribution
they earned. --reference records it once: the same reference again answers
the first record (duplicate: true) and changes nothing.`,
		Example: `  foundry ideas impact "$IDEA" --usage 1200 --unit requests --evidence https://metrics.example/w48 --reference w48
  foundry ideas impact "$IDEA" --usd 100 --evidence "invoice 7, paid" --reference invoice-7
  foundry ideas impact "$IDEA"`,
		Args: args("IDEA_ID"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		f := cmd.Flags()
		usage, revenue := f.Changed("usage"), f.Changed("usd")
		if !usage && !revenue {
			lr := &ledgerv1.ListIdeaImpactRequest{IdeaId: a[0], Offset: offset}
			if f.Changed("limit") {
				lr.Limit = proto.Int32(limit)
			}
			raw, err := e.client.call(ctx, opListImpact, lr, &ledgerv1.ListIdeaImpactResponse{}, callOpts{})
			return e.object(raw, err)
		}
		switch {
		case usage && revenue:
			return usagef("--usage and --usd are two kinds of record: give one")
		case usage && strings.TrimSpace(req.Unit) == "":
			return usagef("--unit is required with --usage: what was counted (requests, installs)")
		case strings.TrimSpace(req.Evidence) == "":
			return usagef("--evidence is required: a URL or a sentence saying where the impact is measured")
		case strings.TrimSpace(req.Reference) == "":
			return usagef("--reference is required: it records the impact once")
		}
		req.IdeaId, req.Kind = a[0], "usage"
		if revenue {
			req.Kind = "revenue"
		}
		raw, err := e.client.call(ctx, opRecordImpact, req, &ledgerv1.RecordImpactResponse{}, callOpts{})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.Float64Var(&req.Quantity, "usage", 0, "record this much usage")
	f.StringVar(&req.Unit, "unit", "", "what the usage counts (with --usage)")
	f.Float64Var(&req.AmountUsd, "usd", 0, "record this much revenue, in USD (administrator)")
	f.StringVar(&req.Evidence, "evidence", "", "where the impact is measured: a URL or a sentence")
	f.StringVar(&req.Reference, "reference", "", "makes the record once: a period, an invoice number")
	f.Int32Var(&limit, "limit", 0, "records per page when listing (server default 50, at most 500)")
	f.Int32Var(&offset, "offset", 0, "records to skip when listing")
	return cmd
}

// --- tasks -------------------------------------------------------------------

func (e *env) tasksCommand() *cobra.Command {
	return group("tasks", "Create, list, show, claim, complete, fail, retry and cancel agent tasks", withIDs(e.tasksCreate(), "id"),
		withIDs(e.tasksList(), "tasks.id"), withIDs(e.tasksShow(), "id"), withIDs(e.tasksClaim(), "task.id"),
		withIDs(e.tasksComplete(), "id"), withIDs(e.tasksFail(), "id"), e.tasksRetry(), withIDs(e.tasksCancel(), "id"))
}

func (e *env) tasksList() *cobra.Command {
	var (
		limit, offset int32
		all           bool
	)
	req := &agentv1.ListTasksRequest{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List tasks, newest first",
		Long: `List tasks, newest first, one page (--limit, --offset) or, with --all, every
page (--limit is then the page size; with --json the pages are merged into
one answer of the same shape). Progress is shown on a terminal.`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		req.Offset = offset
		if cmd.Flags().Changed("limit") {
			req.Limit = proto.Int32(limit)
		}
		resp := &agentv1.ListTasksResponse{}
		if !all {
			raw, err := e.client.call(ctx, opListTasks, req, resp, callOpts{})
			if err != nil || e.machine() {
				return e.orJSON(raw, err)
			}
			e.pageHint("tasks", len(resp.GetTasks()), resp.GetPagination(), true)
			return e.tasksTable(resp.GetTasks())
		}
		if req.Limit == nil {
			req.Limit = proto.Int32(maxPage)
		}
		merged := &agentv1.ListTasksResponse{Pagination: &commonv1.Pagination{Offset: offset}}
		// After the first page, each page is read by the cursor the last
		// one gave: a new task does not shift it, and the server pages by
		// offset no deeper than 10 000 tasks.
		next := ""
		err := e.eachPage("tasks", offset, func(at int32) (int, int64, error) {
			req.Offset, req.Cursor = at, next
			if next != "" {
				req.Offset = 0
			}
			page := &agentv1.ListTasksResponse{}
			if _, err := e.client.call(ctx, opListTasks, req, page, callOpts{}); err != nil {
				return 0, 0, err
			}
			merged.Tasks = append(merged.Tasks, page.GetTasks()...)
			n, total := len(page.GetTasks()), page.GetPagination().GetTotal()
			merged.Pagination.Total = total
			if next = page.GetPagination().GetNextCursor(); next == "" {
				total = int64(at) + int64(n) // the last page
			}
			return n, total, nil
		})
		if err != nil {
			return err
		}
		merged.Pagination.Limit = int32(len(merged.Tasks))
		if e.machine() {
			return e.printMessage(merged)
		}
		return e.tasksTable(merged.GetTasks())
	})
	f := cmd.Flags()
	enumVar(cmd, &req.Status, "status", "only tasks with this status")
	choiceVar(cmd, &req.TaskType, "type", taskTypes, "only tasks of this type")
	f.StringVar(&req.IdeaId, "idea", "", "only tasks whose context names this idea")
	f.Int32Var(&limit, "limit", 0, "tasks per page (server default 50, at most 500)")
	f.Int32Var(&offset, "offset", 0, "tasks to skip")
	f.BoolVar(&all, "all", false, "every page, not only the first")
	return cmd
}

func (e *env) tasksCreate() *cobra.Command {
	var idea, taskContext, idemKey string
	req := &agentv1.CreateTaskRequest{}
	cmd := &cobra.Command{
		Use:   "create DIRECTION --type TYPE",
		Short: "Create a pending task (operators)",
		Long: `Create a pending task of --type that carries out DIRECTION, for a worker to
claim. --idea links it to an idea: completing a spec, impl, test or review
task then advances the idea one stage. --context is more of the task's
context, a JSON object (prompt_variant picks a prompt A/B variant).`,
		Example: `  TASK=$(foundry tasks create "add a timer to the kettle" --type impl --idea "$IDEA" -o id)`,
		Args:    args("DIRECTION"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		if req.TaskType == "" {
			return usagef("--type is required (one of %s)", strings.Join(taskTypes, ", "))
		}
		req.Direction = a[0]
		var err error
		if req.Context, err = jsonObject("--context", taskContext); err != nil {
			return err
		}
		if idea != "" {
			if req.Context == nil {
				req.Context = &structpb.Struct{Fields: map[string]*structpb.Value{}}
			}
			if v, ok := req.Context.GetFields()["idea_id"]; ok && v.GetStringValue() != idea {
				return usagef("--idea %q and the idea_id of --context differ: give one", idea)
			}
			req.Context.Fields["idea_id"] = structpb.NewStringValue(idea)
		}
		raw, err := e.client.call(ctx, opCreateTask, req, &agentv1.CreateTaskResponse{}, callOpts{idempotencyKey: idemKey})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	choiceVar(cmd, &req.TaskType, "type", taskTypes, "the task's type (required)")
	f.StringVar(&idea, "idea", "", "the idea the task is for (its context's idea_id)")
	f.StringVar(&taskContext, "context", "", "the task's context, a JSON object")
	f.StringVar(&idemKey, "idempotency-key", "", "create it at most once for this key (safe retries)")
	return cmd
}

func (e *env) tasksShow() *cobra.Command {
	cmd := &cobra.Command{Use: "show TASK_ID", Short: "Show one task", Args: args("TASK_ID")}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		raw, err := e.client.call(ctx, opGetTask, &agentv1.GetTaskRequest{Id: a[0]}, &agentv1.GetTaskResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

func (e *env) tasksTable(tasks []*agentv1.AgentTaskListItem) error {
	rows := make([][]string, len(tasks))
	for i, t := range tasks {
		rows[i] = []string{t.GetId(), t.GetTaskType(), t.GetStatus().String(), formatFloat(t.GetProgressPct()) + "%", truncate(t.GetDirection(), 60)}
	}
	return e.table([]string{"ID", "TYPE", "STATUS", "PROGRESS", "DIRECTION"}, rows)
}

func (e *env) tasksClaim() *cobra.Command {
	var lease time.Duration
	req := &agentv1.ClaimTaskRequest{}
	cmd := &cobra.Command{
		Use:   "claim",
		Short: "Claim the oldest pending task (of --type) for a worker",
		Long: `Claim the oldest pending task (of the --type given, else of any type) for
--worker, with a lease. Without a pending task it says so and exits 0; with
--json the answer is {"task": null}.`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		if req.WorkerId == "" {
			return usagef("--worker is required")
		}
		if cmd.Flags().Changed("lease") {
			req.LeaseSeconds = proto.Int32(int32(lease.Round(time.Second) / time.Second))
		}
		resp := &agentv1.ClaimTaskResponse{}
		raw, err := e.client.call(ctx, opClaimTask, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		if resp.GetTask() == nil {
			_, err := fmt.Fprintln(e.stdout, "no pending task")
			return err
		}
		task, err := member(raw, "task")
		if err != nil {
			return err
		}
		return e.printObject(task)
	})
	f := cmd.Flags()
	f.StringVar(&req.WorkerId, "worker", "", "the claiming worker's id (required)")
	choicesVar(cmd, &req.TaskTypes, "type", taskTypes, "claim only this task type (repeat for several)")
	f.DurationVar(&lease, "lease", 0, "how long the claim holds without a renewal (default: the server's, 5m)")
	return cmd
}

func (e *env) tasksComplete() *cobra.Command {
	var valueScore, resourceCost float64
	var worker, output string
	cmd := &cobra.Command{Use: "complete TASK_ID", Short: "Mark a task completed", Args: args("TASK_ID")}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		req := &agentv1.UpdateTaskRequest{Id: a[0], Status: agentv1.TaskStatus_completed.Enum()}
		f := cmd.Flags()
		setString(f.Changed("worker"), &req.WorkerId, worker)
		setString(f.Changed("output"), &req.Output, output)
		if f.Changed("value-score") {
			req.ValueScore = proto.Float64(valueScore)
		}
		if f.Changed("resource-cost") {
			req.ResourceCost = proto.Float64(resourceCost)
		}
		raw, err := e.client.call(ctx, opUpdateTask, req, &agentv1.UpdateTaskResponse{}, callOpts{})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.StringVar(&worker, "worker", "", "the worker that ran it (a running task's other worker is refused)")
	f.StringVar(&output, "output", "", "the task's output")
	f.Float64Var(&valueScore, "value-score", 0, "the outcome's value, for prompt A/B ROI")
	f.Float64Var(&resourceCost, "resource-cost", 0, "what it cost, for prompt A/B ROI")
	return cmd
}

func (e *env) tasksFail() *cobra.Command {
	var worker, output, summary, category string
	cmd := &cobra.Command{
		Use:   "fail TASK_ID",
		Short: "Mark a task failed (--error or --output required)",
		Long: `Mark a task failed. It needs --error (the summary) or --output; a missing
summary is the output's first line and a missing --category is classified
from them.`,
		Args: args("TASK_ID"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		req := &agentv1.UpdateTaskRequest{Id: a[0], Status: agentv1.TaskStatus_failed.Enum()}
		f := cmd.Flags()
		setString(f.Changed("worker"), &req.WorkerId, worker)
		setString(f.Changed("output"), &req.Output, output)
		setString(f.Changed("error"), &req.ErrorSummary, summary)
		setString(f.Changed("category"), &req.ErrorCategory, category)
		raw, err := e.client.call(ctx, opUpdateTask, req, &agentv1.UpdateTaskResponse{}, callOpts{})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.StringVar(&worker, "worker", "", "the worker that ran it")
	f.StringVar(&output, "output", "", "the task's output")
	f.StringVar(&summary, "error", "", "what went wrong (the error summary)")
	choiceVar(cmd, &category, "category", failCategories, "the error category (default: classified)")
	return cmd
}

func (e *env) tasksRetry() *cobra.Command {
	var limit int32
	bulk := &agentv1.RetryTasksRequest{}
	cmd := &cobra.Command{
		Use:   "retry [TASK_ID]",
		Short: "Put a failed, timed-out, discarded or cancelled task back in the queue (operator)",
		Long: `Put a task whose run ended without completing back in the queue now, with
one attempt more when it had used them all. Without TASK_ID, retry in bulk
the tasks of --status (and --type, --idea), newest first, up to --limit; the
answer lists those retried and those skipped, with why.`,
		Example: `  foundry tasks retry "$TASK"
  foundry tasks retry --status discarded --type impl --limit 20`,
		Args: cobra.MaximumNArgs(1),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		f := cmd.Flags()
		if len(a) == 1 {
			if f.Changed("status") || f.Changed("type") || f.Changed("idea") || f.Changed("limit") {
				return usagef("give a TASK_ID or a filter (--status, --type, --idea, --limit), not both")
			}
			raw, err := e.client.call(ctx, opRetryTask, &agentv1.RetryTaskRequest{Id: a[0]}, &agentv1.RetryTaskResponse{}, callOpts{})
			return e.object(raw, err)
		}
		if bulk.Status == agentv1.TaskStatus_task_status_unspecified {
			return usagef("give a TASK_ID, or --status to retry in bulk")
		}
		if f.Changed("limit") {
			bulk.Limit = proto.Int32(limit)
		}
		resp := &agentv1.RetryTasksResponse{}
		raw, err := e.client.call(ctx, opRetryTasks, bulk, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		if err := e.tasksTable(resp.GetRetried()); err != nil {
			return err
		}
		for _, s := range resp.GetSkipped() {
			if _, err := fmt.Fprintf(e.stderr, "skipped %s: %s\n", s.GetTaskId(), s.GetDetail()); err != nil {
				return err
			}
		}
		return nil
	})
	f := cmd.Flags()
	enumVar(cmd, &bulk.Status, "status", "retry the tasks with this status (failed, timed_out, discarded, cancelled)")
	choiceVar(cmd, &bulk.TaskType, "type", taskTypes, "only tasks of this type")
	f.StringVar(&bulk.IdeaId, "idea", "", "only tasks whose context names this idea")
	f.Int32Var(&limit, "limit", 0, "the most tasks retried (server default 100, at most 1000)")
	return cmd
}

func (e *env) tasksCancel() *cobra.Command {
	req := &agentv1.CancelTaskRequest{}
	cmd := &cobra.Command{
		Use:   "cancel TASK_ID",
		Short: "Take a task out of the queue (operator)",
		Long: `Cancel a task that has not finished, or a failed one waiting for its retry.
A worker running it is refused its next report and should stop.`,
		Args: args("TASK_ID"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		req.Id = a[0]
		raw, err := e.client.call(ctx, opCancelTask, req, &agentv1.CancelTaskResponse{}, callOpts{})
		return e.object(raw, err)
	})
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why (kept as the task's status_reason)")
	return cmd
}

// setString sets an optional field when its flag was given.
func setString(given bool, dst **string, v string) {
	if given {
		*dst = proto.String(v)
	}
}

// --- contributors ----------------------------------------------------------

// contributor is given, or else the session token's contributor.
func (e *env) contributor(ctx context.Context, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if e.cfg.Token == "" {
		return "", usagef("name the contributor (--contributor) or set a session token (--token, FOUNDRY_TOKEN, or the one foundry register keeps)")
	}
	s := &ledgerv1.GetSessionResponse{}
	if _, err := e.client.call(ctx, opGetSession, &ledgerv1.GetSessionRequest{}, s, callOpts{}); err != nil {
		return "", err
	}
	return s.GetContributorId(), nil
}

// --- cc ----------------------------------------------------------------------

func (e *env) ccCommand() *cobra.Command {
	balance := &cobra.Command{
		Use:   "balance [CONTRIBUTOR_ID]",
		Short: "Show a contributor's CC: available, staked, cooling (default: the session token's contributor)",
		Args:  cobra.MaximumNArgs(1),
	}
	balance.RunE = e.action(func(ctx context.Context, a []string) error {
		given := ""
		if len(a) == 1 {
			given = a[0]
		}
		id, err := e.contributor(ctx, given)
		if err != nil {
			return err
		}
		raw, err := e.client.call(ctx, opGetBalances, &ledgerv1.GetBalancesRequest{ContributorId: id}, &ledgerv1.GetBalancesResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return group("cc", "Credits: balances, deposits, withdrawals, stakes, unstakes, the supply and the rate", balance,
		e.ccDeposit(), e.ccWithdraw(), e.ccMove(true), e.ccMove(false), e.ccSupply(), e.ccRate())
}

func (e *env) ccDeposit() *cobra.Command {
	req := &ledgerv1.DepositRequest{}
	cmd := &cobra.Command{
		Use:   "deposit CONTRIBUTOR_ID --usd AMOUNT --reference REF",
		Short: "Record a USD deposit received for a contributor: mints CC at the buy rate (administrator)",
		Long: `Record a USD deposit received for a contributor (administrator): CC is minted
at the buy rate into the contributor's available balance, and the treasury
grows by the USD. --reference is the payment's reference, which makes the
deposit happen once: the same reference again answers the first deposit
(duplicate: true) and mints nothing.`,
		Example: `  foundry cc deposit "$CONTRIBUTOR" --usd 10 --reference wire-2026-001`,
		Args:    args("CONTRIBUTOR_ID"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		if !cmd.Flags().Changed("usd") {
			return usagef("--usd is required")
		}
		if strings.TrimSpace(req.Reference) == "" {
			return usagef("--reference is required: the payment's reference, which records the deposit once")
		}
		req.ContributorId = a[0]
		raw, err := e.client.call(ctx, opDeposit, req, &ledgerv1.DepositResponse{}, callOpts{})
		return e.object(raw, err)
	})
	cmd.Flags().Float64Var(&req.AmountUsd, "usd", 0, "the USD received (required)")
	cmd.Flags().StringVar(&req.Reference, "reference", "", "the payment's reference (required)")
	return cmd
}

func (e *env) ccWithdraw() *cobra.Command {
	var contributor, idemKey string
	cmd := &cobra.Command{
		Use:   "withdraw AMOUNT_CC",
		Short: "Burn available CC for USD at the sell rate (session token required)",
		Args:  args("AMOUNT_CC"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		amount, err := strconv.ParseFloat(a[0], 64)
		if err != nil {
			return usagef("AMOUNT_CC %q is not a number", a[0])
		}
		id, err := e.contributor(ctx, contributor)
		if err != nil {
			return err
		}
		raw, err := e.client.call(ctx, opWithdraw, &ledgerv1.WithdrawRequest{ContributorId: id, AmountCc: amount},
			&ledgerv1.WithdrawResponse{}, callOpts{idempotencyKey: idemKey})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.StringVar(&contributor, "contributor", "", "whose CC (default: the session token's contributor)")
	f.StringVar(&idemKey, "idempotency-key", "", "withdraw at most once for this key (safe retries)")
	return cmd
}

func (e *env) ccSupply() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "supply",
		Short: "Show the CC outstanding against the treasury: the reserve ratio and the economy's mode",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		raw, err := e.client.call(ctx, opSupply, &ledgerv1.GetSupplyRequest{}, &ledgerv1.GetSupplyResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

func (e *env) ccRate() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rate",
		Short: "Show the exchange rate: CC per USD, and the buy and sell rates around it",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		raw, err := e.client.call(ctx, opRate, &ledgerv1.GetExchangeRateRequest{}, &ledgerv1.GetExchangeRateResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

// ccMove is cc stake (stake) or cc unstake: the two take the same
// arguments and the session token of the contributor whose CC moves.
func (e *env) ccMove(stake bool) *cobra.Command {
	var contributor, idemKey string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "unstake IDEA_ID AMOUNT_CC",
		Short: "Take CC out of a position on an idea (session token required)",
		Args:  args("IDEA_ID", "AMOUNT_CC"),
	}
	if stake {
		cmd.Use, cmd.Short = "stake IDEA_ID AMOUNT_CC", "Stake CC on an idea (session token required, except for --dry-run)"
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		amount, err := strconv.ParseFloat(a[1], 64)
		if err != nil {
			return usagef("AMOUNT_CC %q is not a number", a[1])
		}
		id, err := e.contributor(ctx, contributor)
		if err != nil {
			return err
		}
		opts := callOpts{idempotencyKey: idemKey}
		if stake {
			raw, err := e.client.call(ctx, opStake, &ledgerv1.StakeRequest{ContributorId: id, IdeaId: a[0], AmountCc: amount, DryRun: dryRun},
				&ledgerv1.StakeResponse{}, opts)
			return e.object(raw, err)
		}
		raw, err := e.client.call(ctx, opUnstake, &ledgerv1.UnstakeRequest{ContributorId: id, IdeaId: a[0], AmountCc: amount},
			&ledgerv1.UnstakeResponse{}, opts)
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.StringVar(&contributor, "contributor", "", "whose CC (default: the session token's contributor)")
	f.StringVar(&idemKey, "idempotency-key", "", "move the CC at most once for this key (safe retries)")
	if stake {
		f.BoolVar(&dryRun, "dry-run", false, "only project the stake; nothing moves, no token needed (with --contributor)")
	}
	return cmd
}

// --- status ------------------------------------------------------------------

// waitError is readiness that did not come in time.
type waitError struct{ msg string }

func (w *waitError) Error() string { return w.msg }

func (e *env) statusCommand() *cobra.Command {
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether Foundry is ready, and each service's check",
		Long: `Show whether Foundry is ready (GET /api/ready): each service and database it
checks. Not ready exits 3. With --wait it asks again every half second until
Foundry is ready or --timeout passes (exit 3), showing progress on a terminal.`,
		Example: `  foundry status --wait --timeout 2m && foundry ideas list`,
		Args:    cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		start := time.Now()
		deadline := start.Add(timeout)
		p := e.progress()
		defer p.done()
		var last error // the last answer that was not cut short by the deadline
		for {
			resp := &opsv1.ReadyResponse{}
			raw, err := e.readyBy(ctx, deadline, resp)
			if err == nil {
				p.done()
				return e.printReady(raw, resp)
			}
			// Only unavailability may pass; anything else (a wrong URL's
			// 404, a refused key) will not change by waiting.
			if !wait || exitCode(err) != ExitUnavailable || ctx.Err() != nil {
				return err
			}
			left := time.Until(deadline)
			if left > 0 || last == nil {
				last = err
			}
			if left <= 0 {
				return &waitError{fmt.Sprintf("not ready after %s: %v", timeout, last)}
			}
			reason, _, _ := strings.Cut(err.Error(), "\n")
			p.update("waiting for Foundry (%s): %s", time.Since(start).Round(time.Second), reason)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(min(500*time.Millisecond, left)):
			}
		}
	})
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until Foundry is ready")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "with --wait: how long to wait")
	return cmd
}

// readyBy asks for readiness once, answering by the deadline.
func (e *env) readyBy(ctx context.Context, deadline time.Time, resp *opsv1.ReadyResponse) ([]byte, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return e.client.call(ctx, opReady, &opsv1.ReadyRequest{}, resp, callOpts{})
}

func (e *env) printReady(raw []byte, resp *opsv1.ReadyResponse) error {
	if e.machine() {
		return e.printJSON(raw)
	}
	fmt.Fprintf(e.stdout, "Foundry at %s: %s\n", e.client.t.target(), resp.GetStatus())
	rows := make([][]string, len(resp.GetChecks()))
	for i, c := range resp.GetChecks() {
		rows[i] = []string{c.GetName(), c.GetStatus(), c.GetDetail()}
	}
	return e.table([]string{"CHECK", "STATUS", "DETAIL"}, rows)
}

// --- shared --------------------------------------------------------------------

// object prints a call's single-object answer, or returns its error.
func (e *env) object(raw []byte, err error) error {
	if err != nil {
		return err
	}
	return e.printObject(raw)
}

// orJSON prints a call's answer as JSON, or returns its error.
func (e *env) orJSON(raw []byte, err error) error {
	if err != nil {
		return err
	}
	return e.printJSON(raw)
}

// eachPage calls page with successive offsets from start until a page is
// empty or the total is reached, showing "what: n of total" on a terminal.
func (e *env) eachPage(what string, start int32, page func(offset int32) (n int, total int64, err error)) error {
	p := e.progress()
	defer p.done()
	got := 0
	for offset := start; ; {
		n, total, err := page(offset)
		if err != nil {
			return err
		}
		got += n
		offset += int32(n)
		p.update("%s: %d of %d", what, got, max(total-int64(start), 0))
		if n == 0 || int64(offset) >= total {
			return nil
		}
	}
}

// formatFloat writes a number as short as it is exact.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// --- credentials -----------------------------------------------------------------

func (e *env) tokensCommand() *cobra.Command {
	return group("tokens", "Create, list and revoke API tokens (administrator)", withIDs(e.tokensCreate(), "api_token.id"),
		withIDs(e.tokensList(), "tokens.id"), withIDs(e.tokensRevoke(), "id"))
}

func (e *env) tokensCreate() *cobra.Command {
	req := &ledgerv1.CreateTokenRequest{}
	cmd := &cobra.Command{
		Use:   "create NAME --role ROLE",
		Short: "Create an API token and print it (it is shown once)",
		Long: `Create an API token for a machine or a person: a worker, a CI job, an operator.
The token is printed alone on standard output (details go to standard error),
so a script can keep it: TOKEN=$(foundry tokens create build-bot --role worker).`,
		Example: `  foundry tokens create worker-1 --role worker --ttl 90d`,
		Args:    args("NAME"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		req.Name = a[0]
		resp := &ledgerv1.CreateTokenResponse{}
		raw, err := e.client.call(ctx, opCreateToken, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		t := resp.GetApiToken()
		expires := "never"
		if t.GetExpiresAt() != nil {
			expires = t.GetExpiresAt().GetValue()
		}
		e.note("token %s (%s, role %s, expires %s); it is shown only now\n", t.GetId(), t.GetName(), t.GetRole(), expires)
		_, err = fmt.Fprintln(e.stdout, resp.GetToken())
		return err
	})
	f := cmd.Flags()
	choiceVar(cmd, &req.Role, "role", tokenRoles, "viewer, worker, operator or admin (required)")
	f.StringVar(&req.Ttl, "ttl", "", "lifetime, e.g. 720h or 90d (default: never expires)")
	_ = cmd.MarkFlagRequired("role")
	return cmd
}

func (e *env) tokensList() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List API tokens (never their secrets)", Args: cobra.NoArgs}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		resp := &ledgerv1.ListTokensResponse{}
		raw, err := e.client.call(ctx, opListTokens, &ledgerv1.ListTokensRequest{}, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		rows := make([][]string, len(resp.GetTokens()))
		for i, t := range resp.GetTokens() {
			rows[i] = []string{t.GetId(), t.GetName(), t.GetRole(), t.GetCreatedAt(), orDash(t.GetExpiresAt()), orDash(t.GetRevokedAt())}
		}
		return e.table([]string{"ID", "NAME", "ROLE", "CREATED", "EXPIRES", "REVOKED"}, rows)
	})
	return cmd
}

func (e *env) tokensRevoke() *cobra.Command {
	cmd := &cobra.Command{Use: "revoke TOKEN_ID", Short: "Revoke an API token at once", Args: args("TOKEN_ID")}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		raw, err := e.client.call(ctx, opRevokeToken, &ledgerv1.RevokeTokenRequest{Id: a[0]}, &ledgerv1.RevokeTokenResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

func (e *env) whoamiCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "whoami", Short: "Show who the configured credential is, and its role", Args: cobra.NoArgs}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		raw, err := e.client.call(ctx, opWhoami, &ledgerv1.GetPrincipalRequest{}, &ledgerv1.GetPrincipalResponse{}, callOpts{})
		if err == nil && e.cfg.KeyFile != "" && !e.machine() {
			e.note("(the administrator key of the local Foundry, from %s)\n", e.cfg.KeyFile)
		}
		return e.object(raw, err)
	})
	return cmd
}

// orDash is a nullable string as a table cell: "-" for null, as cell
// writes it.
func orDash(v *wrapperspb.StringValue) string {
	if v == nil {
		return "-"
	}
	return v.GetValue()
}
