package routing_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/routing"
	"github.com/foundryhq/foundry/services/agent/internal/task"
)

func TestDefaultRoutesEveryType(t *testing.T) {
	t.Parallel()
	d := routing.Default()
	require.NoError(t, d.Validate())
	for _, typ := range task.Types {
		got, ok := d.Decide(string(typ))
		require.True(t, ok, "type %s", typ)
		require.NotEmpty(t, got.Model)
		require.NotEmpty(t, got.Template)
	}
	_, ok := d.Decide("dance")
	require.False(t, ok)
}

func TestLoadOverrides(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "routing.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
		"executors": {"local": {"models": {"fast": "llama-3-8b"}, "command": "run-local {{model}} {{task_id}} {{direction}}"},
		              "claude": {"models": {"strong": "claude-next"}}},
		"task_types": {"merge": {"executor": "local", "tier": "fast"}, "spec": {"tier": "strong"}}
	}`), 0o600))
	tbl, err := routing.Load(path, "impl=claude:strong, test=:fast")
	require.NoError(t, err)
	tests := []struct{ typ, executor, tier, model string }{
		{"merge", "local", "fast", "llama-3-8b"},
		{"spec", "claude", "strong", "claude-next"},
		{"impl", "claude", "strong", "claude-next"},
		{"test", "codex", "fast", "gpt-5-mini"},
		{"review", "claude", "balanced", "claude-sonnet-4-5"},
	}
	for _, tt := range tests {
		got, ok := tbl.Decide(tt.typ)
		require.True(t, ok)
		require.Equal(t, routing.Decision{Executor: tt.executor, Tier: tt.tier, Model: tt.model, Template: got.Template}, got, tt.typ)
	}
	got, _ := tbl.Decide("merge")
	require.Equal(t, "run-local llama-3-8b t-1 'merge it'",
		routing.Command(got.Template, routing.Vars{TaskID: "t-1", Direction: "merge it", Model: got.Model}))
	require.Equal(t, "claude-sonnet-4-5", routing.Default().Executors["claude"].Models["balanced"], "Load does not change the defaults")
}

func TestLoadRefusesBadTables(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	tests := []struct {
		name, path, routes, want string
	}{
		{"unknown executor", "", "impl=nobody:fast", `task type impl: unknown executor "nobody"`},
		{"unknown tier", "", "impl=codex:huge", `task type impl: tier "huge" is not one of fast, balanced, strong`},
		{"unknown type", "", "dance=codex:fast", `unknown task type "dance"`},
		{"malformed", "", "impl", "want type=executor:tier"},
		{"missing model", write("nomodel.json", `{"executors": {"x": {"command": "x"}}, "task_types": {"impl": {"executor": "x", "tier": "fast"}}}`), "",
			"task type impl: executor x has no model for tier fast"},
		{"unknown field", write("unknown.json", `{"executor": {}}`), "", `unknown field "executor"`},
		{"missing file", filepath.Join(dir, "none.json"), "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := routing.Load(tt.path, tt.routes)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// TestDirectionCannotEscapeTheCommand runs a filled command through a real
// shell: a direction full of shell syntax arrives as one literal argument.
func TestDirectionCannotEscapeTheCommand(t *testing.T) {
	t.Parallel()
	nasty := `it's "quoted" $(touch /tmp/pwned) ; rm -rf / ` + "`id`\n& | > <"
	cmd := routing.Command(`printf %s {{direction}}`, routing.Vars{Direction: nasty})
	out, err := exec.Command("/bin/sh", "-c", cmd).Output()
	require.NoError(t, err)
	require.Equal(t, nasty, string(out))
}
