package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
)

// workerOptions are foundry worker's flags.
type workerOptions struct {
	id       string
	types    []string
	command  string
	demo     bool
	poll     time.Duration
	lease    time.Duration
	maxTasks int
	idle     bool
}

// workerOutputMax bounds the output a worker reports: the command's last
// bytes, where a failure usually is (the service keeps the same tail).
const workerOutputMax = 64 << 10

// progressPrefix starts a line of a command's output that reports its
// progress: "foundry:progress 40 writing the tests".
const progressPrefix = "foundry:progress "

func (e *env) workerCommand() *cobra.Command {
	var o workerOptions
	cmd := &cobra.Command{
		Use:   "worker (--exec COMMAND | --demo)",
		Short: "Claim agent tasks and run them, until stopped",
		Long: `Claim pending agent tasks (of --type, else of any type) one at a time and
run each: --exec runs COMMAND with /bin/sh -c, --demo the built-in
demonstration executor, which calls no model and only says what it was
given. A worker needs a worker's (or an operator's) credential.

COMMAND gets the task, never interpolated into its text: the task's JSON
(id, task_type, direction, context with the idea and the earlier stages'
outputs, model) on standard input and in the file $FOUNDRY_TASK_FILE, and
FOUNDRY_TASK_ID, FOUNDRY_TASK_TYPE, FOUNDRY_TASK_MODEL, FOUNDRY_IDEA_ID and
FOUNDRY_TASK_PROMPT (the prompt rendered from its type's stored prompt or
built-in template) in the environment. Exit status 0 completes the task with what it printed
(the last 64 KiB); any other fails it, diagnosed from the output. A line
"foundry:progress PCT STEP" (on either stream) reports progress. To report an outcome for
the prompt A/B and what the run spent, write {"value_score": V,
"resource_cost": C, "tokens_in": N, "tokens_out": N, "cost_usd": USD,
"artifact": TEXT_OR_URL} (any of them) to $FOUNDRY_RESULT_FILE; without
cost_usd the service estimates the cost from the tokens at the model's
price. The artifact (at most 64 KiB) reaches the next stage's task with
the output.

While a task runs, the worker renews its claim every third of --lease; a
signal (Ctrl-C) stops the command, hands the task back (pending, for the
next worker) and exits 0.`,
		Example: `  foundry worker --demo --api-key "$WORKER_TOKEN"
  foundry worker --type impl --exec 'claude -p -- "$FOUNDRY_TASK_PROMPT"' --api-key "$WORKER_TOKEN"`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		switch {
		case o.command == "" && !o.demo:
			return usagef("give --exec COMMAND (your executor) or --demo (the demonstration executor)")
		case o.command != "" && o.demo:
			return usagef("give --exec or --demo, not both")
		case o.poll <= 0 || o.lease < 3*time.Second:
			return usagef("--poll must be positive and --lease at least 3s")
		}
		if o.id == "" {
			host, _ := os.Hostname()
			o.id = fmt.Sprintf("%s-%d", orDefault(host, "worker"), os.Getpid())
		}
		return e.work(ctx, o)
	})
	f := cmd.Flags()
	f.StringVar(&o.id, "worker", "", "the worker's id (default: host-pid)")
	choicesVar(cmd, &o.types, "type", taskTypes, "claim only this task type (repeat for several)")
	f.StringVar(&o.command, "exec", "", "run each task with this command (/bin/sh -c); the task comes on standard input")
	f.BoolVar(&o.demo, "demo", false, "run each task with the demonstration executor (no model is called)")
	f.DurationVar(&o.poll, "poll", 2*time.Second, "how long to wait before claiming again when no task is pending")
	f.DurationVar(&o.lease, "lease", 5*time.Minute, "how long a claim holds without a renewal")
	f.IntVar(&o.maxTasks, "max-tasks", 0, "stop after this many tasks (0: no limit)")
	f.BoolVar(&o.idle, "exit-when-idle", false, "stop when no task is pending, instead of waiting for one")
	return cmd
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// work claims and runs tasks until ctx ends (a signal: exit 0), the
// limit is reached, or the service refuses the credential.
func (e *env) work(ctx context.Context, o workerOptions) error {
	e.note("worker %s: claiming %s tasks\n", o.id, typesText(o.types))
	done := 0
	for ctx.Err() == nil && (o.maxTasks == 0 || done < o.maxTasks) {
		req := &agentv1.ClaimTaskRequest{WorkerId: o.id, TaskTypes: o.types, LeaseSeconds: proto.Int32(int32(o.lease / time.Second))}
		resp := &agentv1.ClaimTaskResponse{}
		raw, err := e.client.call(ctx, opClaimTask, req, resp, callOpts{})
		switch {
		case ctx.Err() != nil:
			continue // a signal: the loop ends, and the worker with exit 0
		case refusedCredential(err):
			return err
		case err != nil:
			e.note("worker %s: claiming failed (trying again in %s): %v\n", o.id, o.poll, err)
		case resp.GetTask() == nil && o.idle:
			e.note("worker %s: no pending task; %d done\n", o.id, done)
			return nil
		case resp.GetTask() != nil:
			taskJSON, err := member(raw, "task")
			if err != nil {
				return err
			}
			e.runTask(ctx, o, resp.GetTask(), taskJSON)
			done++
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(o.poll):
		}
	}
	e.note("worker %s: stopped; %d tasks done\n", o.id, done)
	return nil
}

func typesText(types []string) string {
	if len(types) == 0 {
		return "all"
	}
	return strings.Join(types, ", ")
}

// refusedCredential reports an answer no retry changes: the credential
// is unknown or may not claim.
func refusedCredential(err error) bool {
	var api *apiError
	return errors.As(err, &api) && (api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden)
}

// runResult is how a run ended.
type runResult struct {
	ok           bool
	output       string
	summary      string
	valueScore   *float64
	resourceCost *float64
	// The run's usage, as its command reported it.
	tokensIn, tokensOut *int32
	costUSD             *float64
	// artifact is a text or a URL the run produced, as its command
	// reported it.
	artifact *string
}

// runTask runs one claimed task and reports how it ended; on a signal it
// hands the task back.
func (e *env) runTask(ctx context.Context, o workerOptions, t *agentv1.AgentTask, taskJSON []byte) {
	start := time.Now()
	e.note("worker %s: task %s (%s) claimed\n", o.id, t.GetId(), t.GetTaskType())
	hb := &heartbeat{}
	runCtx, stop := context.WithCancel(ctx)
	var (
		wg   sync.WaitGroup
		lost atomic.Bool
	)
	wg.Go(func() {
		if e.renew(runCtx, o, t.GetId(), hb) {
			lost.Store(true)
			stop() // the task is no longer ours: its command is killed
		}
	})
	var res runResult
	if o.demo {
		res = demoRun(runCtx, t)
	} else {
		res = execRun(runCtx, o.command, t, taskJSON, hb)
	}
	stop()
	wg.Wait()
	if lost.Load() {
		e.note("worker %s: task %s: the claim was refused (an operator cancelled the task, or its lease ran out and another "+
			"worker took it): its command was stopped, nothing is reported\n", o.id, t.GetId())
		return
	}
	// The run is over: what it did is reported even when a signal came
	// just now, and a stopped run hands the task back.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req := &agentv1.UpdateTaskRequest{Id: t.GetId(), Output: proto.String(res.output), ValueScore: res.valueScore,
		ResourceCost: res.resourceCost, TokensIn: res.tokensIn, TokensOut: res.tokensOut, CostUsd: res.costUSD, Artifact: res.artifact}
	switch {
	case ctx.Err() != nil:
		req = &agentv1.UpdateTaskRequest{Id: t.GetId(), Status: agentv1.TaskStatus_pending.Enum(), WorkerId: proto.String(o.id)}
	case res.ok:
		req.Status, req.WorkerId = agentv1.TaskStatus_completed.Enum(), proto.String(o.id)
	default:
		req.Status, req.WorkerId, req.ErrorSummary = agentv1.TaskStatus_failed.Enum(), proto.String(o.id), proto.String(res.summary)
	}
	_, err := e.client.call(rctx, opUpdateTask, req, &agentv1.UpdateTaskResponse{}, callOpts{})
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case err != nil:
		e.note("worker %s: task %s: reporting its end failed (its claim runs out, and it is handed to the next worker): %v\n",
			o.id, t.GetId(), err)
	case ctx.Err() != nil:
		e.note("worker %s: task %s handed back (stopped after %s)\n", o.id, t.GetId(), took)
	case res.ok:
		e.note("worker %s: task %s completed in %s\n", o.id, t.GetId(), took)
	default:
		e.note("worker %s: task %s failed in %s: %s\n", o.id, t.GetId(), took, res.summary)
	}
}

// heartbeat is the progress a run last reported, for the next renewal.
type heartbeat struct {
	mu   sync.Mutex
	pct  *float64
	step string
}

func (h *heartbeat) set(pct float64, step string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pct, h.step = &pct, step
}

func (h *heartbeat) get() (*float64, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pct, h.step
}

// renew renews the task's claim every third of the lease until ctx ends,
// carrying the progress the run last reported. It reports true when the
// service refused a renewal with a conflict: the task is finished (an
// operator cancelled it) or another worker's.
func (e *env) renew(ctx context.Context, o workerOptions, id string, hb *heartbeat) bool {
	t := time.NewTicker(o.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		pct, step := hb.get()
		req := &agentv1.UpdateTaskRequest{Id: id, ProgressPct: pct, CurrentStep: proto.String(orDefault(step, "running")),
			WorkerId: proto.String(o.id)}
		_, err := e.client.call(ctx, opUpdateTask, req, &agentv1.UpdateTaskResponse{}, callOpts{})
		var api *apiError
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.As(err, &api) && api.Status == http.StatusConflict:
			return true
		default:
			e.note("worker %s: task %s: renewing the claim failed: %v\n", o.id, id, err)
		}
	}
}

// demoRun is the demonstration executor: it calls no model; it says what
// it was given (the direction, the idea, the earlier stages' outputs) as
// the task's output, after a moment, so a loop can be watched end to end.
func demoRun(ctx context.Context, t *agentv1.AgentTask) runResult {
	select {
	case <-ctx.Done():
		return runResult{output: "stopped", summary: "stopped"}
	case <-time.After(200 * time.Millisecond):
	}
	c := t.GetContext().GetFields()
	var b strings.Builder
	fmt.Fprintf(&b, "demo executor (no model was called): a %s task\n", t.GetTaskType())
	fmt.Fprintf(&b, "direction: %s\n", t.GetDirection())
	if idea := c["idea"].GetStructValue().GetFields(); idea != nil {
		fmt.Fprintf(&b, "idea: %s\n", idea["name"].GetStringValue())
	}
	if prev := c["previous"].GetListValue().GetValues(); len(prev) > 0 {
		fmt.Fprintf(&b, "earlier stages: %d\n", len(prev))
		for _, p := range prev {
			s := p.GetStructValue().GetFields()
			fmt.Fprintf(&b, "- %s: %d bytes of output", s["task_type"].GetStringValue(), len(s["output"].GetStringValue()))
			if a := s["artifact"].GetStringValue(); a != "" {
				fmt.Fprintf(&b, ", artifact %q", a)
			}
			b.WriteString("\n")
		}
	}
	artifact := fmt.Sprintf("demo %s artifact of task %s", t.GetTaskType(), t.GetId())
	return runResult{ok: true, output: b.String(), valueScore: proto.Float64(1), resourceCost: proto.Float64(0), artifact: &artifact}
}

// execRun runs the worker's command for the task, the task on its
// standard input and in a file, in its own process group so a signal
// stops everything it started.
func execRun(ctx context.Context, command string, t *agentv1.AgentTask, taskJSON []byte, hb *heartbeat) runResult {
	dir, err := os.MkdirTemp("", "foundry-task-")
	if err != nil {
		return runResult{output: err.Error(), summary: "the worker could not make the task's directory: " + err.Error()}
	}
	defer os.RemoveAll(dir)
	taskFile, resultFile := filepath.Join(dir, "task.json"), filepath.Join(dir, "result.json")
	if err := os.WriteFile(taskFile, taskJSON, 0o600); err != nil {
		return runResult{output: err.Error(), summary: "the worker could not write the task's file: " + err.Error()}
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdin = bytes.NewReader(taskJSON)
	cmd.Env = append(os.Environ(), "FOUNDRY_TASK_ID="+t.GetId(), "FOUNDRY_TASK_TYPE="+t.GetTaskType(), "FOUNDRY_TASK_MODEL="+t.GetModel(),
		"FOUNDRY_IDEA_ID="+t.GetContext().GetFields()["idea_id"].GetStringValue(), "FOUNDRY_TASK_FILE="+taskFile,
		"FOUNDRY_RESULT_FILE="+resultFile, "FOUNDRY_TASK_PROMPT="+t.GetPrompt())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &outputTail{max: workerOutputMax}
	pr, pw := io.Pipe()
	// One writer for both: the command's stdout and stderr then share one
	// pipe, in the order it wrote them (two would each be copied by a
	// goroutine of its own, and the failure's last line land anywhere).
	w := io.MultiWriter(out, pw)
	cmd.Stdout, cmd.Stderr = w, w
	go scanProgress(pr, hb)
	if err := cmd.Start(); err != nil {
		pw.Close()
		return runResult{output: err.Error(), summary: "the command did not start: " + err.Error()}
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-waited
	}
	pw.Close()
	res := runResult{ok: werr == nil, output: out.String()}
	if werr != nil {
		res.summary = lastLine(res.output)
		if res.summary == "" {
			res.summary = "the command " + werr.Error()
		}
		if res.output == "" {
			res.output = werr.Error()
		}
	}
	if raw, err := os.ReadFile(resultFile); err == nil {
		var r struct {
			ValueScore   *float64 `json:"value_score"`
			ResourceCost *float64 `json:"resource_cost"`
			TokensIn     *int32   `json:"tokens_in"`
			TokensOut    *int32   `json:"tokens_out"`
			CostUSD      *float64 `json:"cost_usd"`
			Artifact     *string  `json:"artifact"`
		}
		if json.Unmarshal(raw, &r) == nil {
			res.valueScore, res.resourceCost = r.ValueScore, r.ResourceCost
			res.tokensIn, res.tokensOut, res.costUSD, res.artifact = r.TokensIn, r.TokensOut, r.CostUSD, r.Artifact
		}
	}
	return res
}

// scanProgress reads the command's output for progress lines.
func scanProgress(r io.Reader, hb *heartbeat) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4096), workerOutputMax)
	for s.Scan() {
		line, ok := strings.CutPrefix(s.Text(), progressPrefix)
		if !ok {
			continue
		}
		pctText, step, _ := strings.Cut(strings.TrimSpace(line), " ")
		if pct, err := strconv.ParseFloat(pctText, 64); err == nil && pct >= 0 && pct <= 100 {
			hb.set(pct, strings.TrimSpace(step))
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// lastLine is the output's last non-empty line, where a failure says why.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// outputTail keeps the last max bytes written to it.
type outputTail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *outputTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *outputTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
