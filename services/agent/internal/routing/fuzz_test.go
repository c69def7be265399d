package routing_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/routing"
	"github.com/foundryhq/foundry/services/agent/internal/task"
)

// requireRoutable checks what Load promises of a table it returns: every
// task type decides to a known executor at a known tier with a model and
// a command template.
func requireRoutable(t *testing.T, table routing.Table) {
	t.Helper()
	for _, typ := range task.Types {
		d, ok := table.Decide(string(typ))
		require.True(t, ok, "task type %s has no route", typ)
		require.Contains(t, routing.Tiers, d.Tier)
		require.NotEmpty(t, strings.TrimSpace(d.Model))
		require.NotEmpty(t, strings.TrimSpace(d.Template))
	}
}

// FuzzParseRoutes checks the inline routing overrides
// ("type=executor:tier,..."): each non-blank part names a type and an
// executor or a tier, trimmed; laid over the defaults the result is either
// routable for every task type or refused by Load, never half-applied.
func FuzzParseRoutes(f *testing.F) {
	for _, s := range []string{"", "impl=claude:strong", "impl=claude", "impl=:fast", "impl=", "=claude", "impl=nobody:strong",
		"impl=claude:ultra", "bogus=claude:fast", " spec = codex : fast , ,review=claude", "a=b=c:d:e", "\xff=\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		over, err := routing.ParseRoutes(s)
		if err != nil {
			require.ErrorContains(t, err, "want type=executor:tier")
			return
		}
		parts := 0
		for _, p := range strings.Split(s, ",") {
			if strings.TrimSpace(p) != "" {
				parts++
			}
		}
		require.LessOrEqual(t, len(over.TaskTypes), parts)
		for typ, r := range over.TaskTypes {
			require.NotEmpty(t, typ)
			require.Equal(t, strings.TrimSpace(typ), typ)
			require.True(t, r.Executor != "" || r.Tier != "")
			require.Equal(t, strings.TrimSpace(r.Executor), r.Executor)
			require.Equal(t, strings.TrimSpace(r.Tier), r.Tier)
		}
		table, err := routing.Load("", s)
		if err != nil {
			require.ErrorContains(t, err, "agent routing")
			return
		}
		requireRoutable(t, table)
		for typ, r := range over.TaskTypes {
			d, _ := table.Decide(typ)
			if r.Executor != "" {
				require.Equal(t, r.Executor, d.Executor)
			}
			if r.Tier != "" {
				require.Equal(t, r.Tier, d.Tier)
			}
		}
	})
}

// FuzzLoadFile checks the JSON routing file: unknown fields, malformed
// JSON and anything after the one object are refused with the file named,
// and whatever Load accepts routes every task type.
func FuzzLoadFile(f *testing.F) {
	f.Add([]byte(`{}`), "")
	f.Add([]byte(`{"executors":{"claude":{"models":{"strong":"opus-next"}}},"task_types":{"impl":{"executor":"claude","tier":"strong"}}}`), "")
	f.Add([]byte(`{"executors":{"x":{"models":{"fast":"m"},"command":"x {{direction}}"}},"task_types":{"merge":{"executor":"x"}}}`), "deploy=x")
	f.Add([]byte(`{"executors":{"x":{"models":{"fast":"m"}}}}`), "")
	f.Add([]byte(`{"executors":{"claude":{"models":{"ultra":"m"}}}}`), "")
	f.Add([]byte(`{"task_types":{"spec":{"executor":"claude","tier":"fast"}},"extra":1}`), "")
	f.Add([]byte(`{"executors":{"claude":{"models":{"strong":" "}}}}`), "")
	f.Add([]byte(`{"executors":null,"task_types":{"spec":null}}`), "")
	f.Add([]byte(`{} {"extra":1}`), "")
	f.Add([]byte(`[`), "")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, file []byte, routes string) {
		path := filepath.Join(dir, "routing.json")
		require.NoError(t, os.WriteFile(path, file, 0o600))
		table, err := routing.Load(path, routes)
		if err != nil {
			require.True(t, strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "agent routing") ||
				strings.Contains(err.Error(), "want type=executor:tier"), err.Error())
			return
		}
		require.True(t, json.Valid(file), "only one JSON value is a routing file: %q", file)
		requireRoutable(t, table)
		for name, e := range table.Executors {
			for tier := range e.Models {
				require.True(t, slices.Contains(routing.Tiers, tier), "executor %s has tier %q", name, tier)
			}
		}
	})
}

// unquote reads a string of POSIX shell words made only of single-quoted
// parts and \' escapes, as ShellQuote writes them; ok is false for anything
// a shell could read differently (an unquoted byte, an open quote).
func unquote(s string) (string, bool) {
	var out strings.Builder
	for s != "" {
		switch {
		case strings.HasPrefix(s, `\'`):
			out.WriteByte('\'')
			s = s[2:]
		case s[0] == '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return "", false
			}
			out.WriteString(s[1 : 1+end])
			s = s[2+end:]
		default:
			return "", false
		}
	}
	return out.String(), true
}

// FuzzShellQuote checks a task's direction, placed in a command template,
// is one shell word that reads back as exactly the direction: no quote,
// semicolon, newline or $(...) in it can end the word or run anything.
func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"", "fix the bug", "it's", "'; rm -rf / #", "$(reboot)", "`id`", "a\nb", "\\'", "''", "\xff\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, direction string) {
		q := routing.ShellQuote(direction)
		got, ok := unquote(q)
		require.True(t, ok, "%q is not one quoted word", q)
		require.Equal(t, direction, got)
		cmd := routing.Command("claude -p {{direction}} --model {{model}}", routing.Vars{Direction: direction, Model: "m"})
		require.Equal(t, "claude -p "+q+" --model m", cmd)
	})
}
