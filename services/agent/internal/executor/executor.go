// Package executor runs the pipeline loop's tasks. An Executor takes a
// task the loop created and reports how it ended: "exec" runs the task's
// routed command as a local subprocess; "external" waits for a worker to
// claim and finish the task through the API.
package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/task"
)

// Task is what an executor needs of a task.
type Task struct {
	ID        string
	Type      string
	Direction string
	Command   string
	Model     string
	IdeaID    string
	// Prompt is the task's rendered prompt (FOUNDRY_TASK_PROMPT).
	Prompt string
}

// Result is how a task ended.
type Result struct {
	Succeeded bool
	// Output is what the task printed (the tail, when long).
	Output string
	// Summary and Category diagnose a failure ("" on success).
	Summary  string
	Category string
	Duration time.Duration
	// Finished is true when the executor already recorded the outcome on
	// the task (an external worker did); the loop then only reads it.
	Finished bool
	// Report is what the command said of its run in $FOUNDRY_RESULT_FILE
	// (the same file and fields foundry worker reads), so the loop's own
	// runs carry usage and a value as a worker's do.
	Report Report
}

// Report is a run's own account: any field may be missing.
type Report struct {
	ValueScore   *float64 `json:"value_score"`
	ResourceCost *float64 `json:"resource_cost"`
	TokensIn     *int64   `json:"tokens_in"`
	TokensOut    *int64   `json:"tokens_out"`
	CostUSD      *float64 `json:"cost_usd"`
	// Artifact is a text or a URL the run produced (usecase.MaxArtifact).
	Artifact *string `json:"artifact"`
}

// readReport reads the result file a command may have written; a missing
// or malformed one is no report (the run's outcome is its exit status,
// and the service estimates what is missing).
func readReport(path string) Report {
	var r Report
	raw, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(raw, &r) != nil {
		return Report{}
	}
	return r
}

// Executor runs one task.
type Executor interface {
	Name() string
	Run(ctx context.Context, t Task) (Result, error)
}

// MaxOutput bounds the output kept from a subprocess: its last MaxOutput
// bytes, where the failure usually is.
const MaxOutput = 64 << 10

// Exec runs the task's command with /bin/sh -c, with the task's fields in
// the environment (FOUNDRY_TASK_ID, FOUNDRY_TASK_TYPE, FOUNDRY_TASK_MODEL,
// FOUNDRY_IDEA_ID, FOUNDRY_TASK_DIRECTION, FOUNDRY_TASK_PROMPT, and
// FOUNDRY_RESULT_FILE for its Report), in its own process group so a
// timeout kills everything it started. Exit status 0 is success; anything
// else is a failure whose output is classified. A run past Timeout is a
// failure in the timeout category.
type Exec struct {
	Timeout time.Duration
	// Dir is the working directory ("" for the service's).
	Dir string
	// Env is added to the environment (KEY=value).
	Env []string
}

// Name implements Executor.
func (Exec) Name() string { return "exec" }

// Run implements Executor.
func (e Exec) Run(ctx context.Context, t Task) (Result, error) {
	if strings.TrimSpace(t.Command) == "" {
		return Result{}, errors.New("exec executor: the task has no command (check the routing's command template)")
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	dir, err := os.MkdirTemp("", "foundry-task-")
	if err != nil {
		return Result{}, fmt.Errorf("exec executor: the task's directory: %w", err)
	}
	defer os.RemoveAll(dir)
	resultFile := filepath.Join(dir, "result.json")
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command("/bin/sh", "-c", t.Command)
	cmd.Dir = e.Dir
	cmd.Env = append(os.Environ(), e.Env...)
	cmd.Env = append(cmd.Env, "FOUNDRY_TASK_ID="+t.ID, "FOUNDRY_TASK_TYPE="+t.Type, "FOUNDRY_TASK_MODEL="+t.Model,
		"FOUNDRY_IDEA_ID="+t.IdeaID, "FOUNDRY_TASK_DIRECTION="+t.Direction, "FOUNDRY_TASK_PROMPT="+t.Prompt,
		"FOUNDRY_RESULT_FILE="+resultFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &tail{max: MaxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("exec executor: start: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-runCtx.Done():
		// Kill the whole group: a shell's children would otherwise outlive it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		waitErr = <-done
	}
	res := Result{Output: out.String(), Duration: time.Since(start), Report: readReport(resultFile)}
	switch {
	case runCtx.Err() != nil && ctx.Err() == nil:
		res.Summary = fmt.Sprintf("timed out after %s", timeout)
		res.Category = task.CategoryTimeout
		res.Output = strings.TrimRight(res.Output, "\n") + "\n" + res.Summary
	case ctx.Err() != nil:
		return res, ctx.Err()
	case waitErr == nil:
		res.Succeeded = true
	default:
		d, err := task.Diagnose("", "", res.Output)
		if err != nil { // no output at all
			d = task.Diagnosis{Summary: waitErr.Error(), Category: task.Classify(waitErr.Error())}
		}
		if d.Category == task.CategoryUnknown {
			// A non-zero exit with unclassifiable output is still the
			// executor's process ending badly.
			d.Category = task.CategoryExecutorCrash
		}
		res.Summary, res.Category = d.Summary, d.Category
		if strings.TrimSpace(res.Output) == "" {
			res.Output = waitErr.Error()
		}
	}
	return res, nil
}

// tail keeps the last max bytes written to it; safe for the two writers
// (stdout and stderr) a command has.
type tail struct {
	mu      sync.Mutex
	max     int
	buf     bytes.Buffer
	dropped bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
		t.dropped = true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return "…" + t.buf.String()
	}
	return t.buf.String()
}

// Status is a task's state as the external executor reads it.
type Status struct {
	Status  string
	Output  string
	Summary string
	// Category is the error category of a failed task.
	Category string
	Duration time.Duration
}

// Reader reads a task's status.
type Reader interface {
	TaskStatus(ctx context.Context, id string) (Status, error)
}

// External leaves the task to a worker that claims it through the API
// (POST /api/agent/tasks/claim) and finishes it (PATCH), and waits,
// polling, until the task is finished or Timeout passes (then the run
// reports a timeout, which the loop records on the task as timed_out).
type External struct {
	Tasks   Reader
	Poll    time.Duration
	Timeout time.Duration
}

// Name implements Executor.
func (External) Name() string { return "external" }

// Run implements Executor.
func (e External) Run(ctx context.Context, t Task) (Result, error) {
	poll, timeout := e.Poll, e.Timeout
	if poll <= 0 {
		poll = time.Second
	}
	if timeout <= 0 {
		timeout = time.Hour
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		s, err := e.Tasks.TaskStatus(ctx, t.ID)
		if err != nil {
			return Result{}, err
		}
		switch task.Status(s.Status) {
		case task.Completed:
			return Result{Succeeded: true, Output: s.Output, Duration: s.Duration, Finished: true}, nil
		case task.Failed, task.TimedOut, task.Discarded:
			return Result{Output: s.Output, Summary: s.Summary, Category: s.Category, Duration: s.Duration, Finished: true}, nil
		case task.Cancelled:
			return Result{Output: s.Output, Summary: "an operator cancelled the task", Duration: s.Duration, Finished: true}, nil
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-deadline.C:
			return Result{Summary: fmt.Sprintf("no worker finished the task within %s", timeout),
				Category: task.CategoryTimeout, Finished: false}, nil
		case <-tick.C:
		}
	}
}
