// Package routing decides, per task type, which executor runs a task, at
// which tier, on which model, and the command it suggests. The built-in
// table can be overridden by a JSON file and by a short "type=executor:tier"
// list (flags or environment). It has no SQL and no proto.
package routing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/foundryhq/foundry/services/agent/internal/task"
)

// The tiers, cheapest first.
const (
	Fast     = "fast"
	Balanced = "balanced"
	Strong   = "strong"
)

// Tiers lists the tiers.
var Tiers = []string{Fast, Balanced, Strong}

// Executor is a tool that runs tasks: its model for each tier and the
// command template it suggests.
type Executor struct {
	// Models maps a tier to the model name.
	Models map[string]string `json:"models"`
	// Command is the suggested command. Placeholders: {{direction}} (shell
	// quoted), {{model}}, {{task_id}}, {{task_type}}, {{tier}}.
	Command string `json:"command"`
}

// Route is where a task type goes.
type Route struct {
	Executor string `json:"executor"`
	Tier     string `json:"tier"`
}

// Table is the whole routing configuration.
type Table struct {
	Executors map[string]Executor `json:"executors"`
	TaskTypes map[string]Route    `json:"task_types"`
}

// Default is the built-in table: Claude Code for specs, reviews and
// reflection (where judgement matters), Codex for implementation and tests,
// the fast tier for mechanical steps (merge, deploy, verify).
func Default() Table {
	return Table{
		Executors: map[string]Executor{
			"claude": {
				Models:  map[string]string{Fast: "claude-haiku-4-5", Balanced: "claude-sonnet-4-5", Strong: "claude-opus-4-1"},
				Command: "claude -p --model {{model}} -- {{prompt}}",
			},
			"codex": {
				Models:  map[string]string{Fast: "gpt-5-mini", Balanced: "gpt-5-codex", Strong: "gpt-5"},
				Command: "codex exec --model {{model}} -- {{prompt}}",
			},
		},
		TaskTypes: map[string]Route{
			string(task.Spec):       {Executor: "claude", Tier: Strong},
			string(task.Impl):       {Executor: "codex", Tier: Balanced},
			string(task.Test):       {Executor: "codex", Tier: Balanced},
			string(task.Review):     {Executor: "claude", Tier: Balanced},
			string(task.Heal):       {Executor: "claude", Tier: Balanced},
			string(task.CodeReview): {Executor: "claude", Tier: Balanced},
			string(task.Merge):      {Executor: "codex", Tier: Fast},
			string(task.Deploy):     {Executor: "codex", Tier: Fast},
			string(task.Verify):     {Executor: "claude", Tier: Fast},
			string(task.Reflect):    {Executor: "claude", Tier: Strong},
		},
	}
}

// Decision is a task's routing.
type Decision struct {
	Executor string
	Tier     string
	Model    string
	// Template is the executor's command template (see Command).
	Template string
}

// Decide routes a task type; ok is false for a type the table lacks.
func (t Table) Decide(taskType string) (Decision, bool) {
	r, ok := t.TaskTypes[taskType]
	if !ok {
		return Decision{}, false
	}
	e := t.Executors[r.Executor]
	return Decision{Executor: r.Executor, Tier: r.Tier, Model: e.Models[r.Tier], Template: e.Command}, true
}

// Vars fill a command template.
type Vars struct {
	TaskID    string
	TaskType  string
	Direction string
	// Prompt is the task's prompt, rendered from its template.
	Prompt string
	Model  string
	Tier   string
}

// Command fills the template. The direction and the prompt are
// single-quoted for a POSIX shell, so neither can break out of its
// argument; the other values come from the configuration and the service.
func Command(template string, v Vars) string {
	return strings.NewReplacer(
		"{{direction}}", ShellQuote(v.Direction),
		"{{prompt}}", ShellQuote(v.Prompt),
		"{{model}}", v.Model,
		"{{task_id}}", v.TaskID,
		"{{task_type}}", v.TaskType,
		"{{tier}}", v.Tier,
	).Replace(template)
}

// ShellQuote quotes s as one POSIX shell word.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Merge returns t with over's executors and task types laid over it: an
// executor in over replaces the command when it gives one and adds or
// replaces the models it names; a task type in over replaces the route's
// executor and tier where given.
func (t Table) Merge(over Table) Table {
	out := Table{Executors: map[string]Executor{}, TaskTypes: maps.Clone(t.TaskTypes)}
	for name, e := range t.Executors {
		out.Executors[name] = Executor{Models: maps.Clone(e.Models), Command: e.Command}
	}
	for name, e := range over.Executors {
		cur := out.Executors[name]
		if cur.Models == nil {
			cur.Models = map[string]string{}
		}
		maps.Copy(cur.Models, e.Models)
		if e.Command != "" {
			cur.Command = e.Command
		}
		out.Executors[name] = cur
	}
	for typ, r := range over.TaskTypes {
		cur := out.TaskTypes[typ]
		if r.Executor != "" {
			cur.Executor = r.Executor
		}
		if r.Tier != "" {
			cur.Tier = r.Tier
		}
		out.TaskTypes[typ] = cur
	}
	return out
}

// Validate checks every task type is routed to a known executor at a
// known tier that has a model, and that every executor has a command.
func (t Table) Validate() error {
	var errs []error
	for _, typ := range task.Types {
		r, ok := t.TaskTypes[string(typ)]
		if !ok {
			errs = append(errs, fmt.Errorf("task type %s has no route", typ))
			continue
		}
		e, ok := t.Executors[r.Executor]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("task type %s: unknown executor %q", typ, r.Executor))
		case !slices.Contains(Tiers, r.Tier):
			errs = append(errs, fmt.Errorf("task type %s: tier %q is not one of %s", typ, r.Tier, strings.Join(Tiers, ", ")))
		case strings.TrimSpace(e.Models[r.Tier]) == "":
			errs = append(errs, fmt.Errorf("task type %s: executor %s has no model for tier %s", typ, r.Executor, r.Tier))
		}
	}
	for typ := range t.TaskTypes {
		if _, ok := task.ParseType(typ); !ok {
			errs = append(errs, fmt.Errorf("unknown task type %q", typ))
		}
	}
	for name, e := range t.Executors {
		if strings.TrimSpace(e.Command) == "" {
			errs = append(errs, fmt.Errorf("executor %s has no command", name))
		}
		for tier := range e.Models {
			if !slices.Contains(Tiers, tier) {
				errs = append(errs, fmt.Errorf("executor %s: tier %q is not one of %s", name, tier, strings.Join(Tiers, ", ")))
			}
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// ParseFile reads a JSON table (the Table shape, every part optional;
// unknown fields are refused).
func ParseFile(path string) (Table, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Table{}, fmt.Errorf("read routing file: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	var t Table
	if err := dec.Decode(&t); err != nil {
		return Table{}, fmt.Errorf("routing file %s: %w", path, err)
	}
	// Anything after the table (a second object pasted below it) would
	// otherwise be ignored without a word.
	if _, err := dec.Token(); err != io.EOF {
		return Table{}, fmt.Errorf("routing file %s: want one JSON object, found more after it", path)
	}
	return t, nil
}

// ParseRoutes reads "type=executor:tier,type=executor" (the tier may be
// left out to keep the current one; "type=:tier" keeps the executor).
func ParseRoutes(s string) (Table, error) {
	out := Table{TaskTypes: map[string]Route{}}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		typ, route, ok := strings.Cut(part, "=")
		typ = strings.TrimSpace(typ)
		if !ok || typ == "" {
			return Table{}, fmt.Errorf("routing %q: want type=executor:tier", part)
		}
		exec, tier, _ := strings.Cut(route, ":")
		r := Route{Executor: strings.TrimSpace(exec), Tier: strings.TrimSpace(tier)}
		if r.Executor == "" && r.Tier == "" {
			return Table{}, fmt.Errorf("routing %q: want type=executor:tier", part)
		}
		out.TaskTypes[typ] = r
	}
	return out, nil
}

// Load builds the table: the defaults, then the file (when path is not
// empty), then the inline routes; the result must validate.
func Load(path, routes string) (Table, error) {
	t := Default()
	if path != "" {
		f, err := ParseFile(path)
		if err != nil {
			return Table{}, err
		}
		t = t.Merge(f)
	}
	if routes != "" {
		r, err := ParseRoutes(routes)
		if err != nil {
			return Table{}, err
		}
		t = t.Merge(r)
	}
	if err := t.Validate(); err != nil {
		return Table{}, fmt.Errorf("agent routing: %w", err)
	}
	return t, nil
}
