package cli_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// availableCommands are the subcommands a help text lists.
func availableCommands(help string) []string {
	_, list, found := strings.Cut(help, "\nAvailable Commands:\n")
	if !found {
		return nil
	}
	list, _, _ = strings.Cut(list, "\n\n")
	var names []string
	for line := range strings.Lines(list) {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// TestHelpEverywhere walks the command tree as a person would, from
// foundry --help down every "Available Commands:" list: each command
// prints its help on stdout and exits 0, sending nothing; foundry help
// PATH prints the same; and docs/cli.md names every command.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	// Nothing listens here: help must not need Foundry.
	env := map[string]string{"FOUNDRY_URL": "http://" + allinonetest.FreeAddr(t)}
	var leaves []string
	var walk func(path []string)
	walk = func(path []string) {
		out := ok(t, env, append(slices.Clone(path), "--help")...)
		usage := strings.Join(append([]string{"foundry"}, path...), " ")
		require.Contains(t, out, "Usage:\n  "+usage, "foundry %s --help", strings.Join(path, " "))
		require.Contains(t, out, "  -o, --format string", usage)
		require.Equal(t, out, ok(t, env, append([]string{"help"}, path...)...), "foundry help %s", strings.Join(path, " "))
		subs := availableCommands(out)
		if len(subs) == 0 && len(path) > 0 {
			leaves = append(leaves, strings.Join(path, " "))
		}
		for _, sub := range subs {
			walk(append(slices.Clone(path), sub))
		}
	}
	out := ok(t, env, "--help")
	require.Equal(t, []string{"api", "assets", "audit", "cc", "completion", "contributions", "distributions", "help", "ideas",
		"incidents", "logout", "register", "status", "tasks", "tokens", "version", "whoami"}, availableCommands(out))
	walk(nil)
	require.Equal(t, []string{
		"api", "assets create", "assets list", "assets show",
		"audit checkpoint", "audit keygen", "audit list", "audit repair", "audit verify",
		"cc balance", "cc deposit", "cc rate", "cc stake", "cc supply", "cc unstake", "cc withdraw",
		"completion bash", "completion fish", "completion powershell", "completion zsh",
		"contributions create", "contributions list", "contributions show",
		"distributions create", "distributions list", "distributions show",
		"help", "ideas advance", "ideas create", "ideas list", "ideas show",
		"incidents freeze", "incidents list", "incidents status", "incidents unfreeze",
		"logout", "register", "status",
		"tasks claim", "tasks complete", "tasks create", "tasks fail", "tasks list", "tasks show",
		"tokens create", "tokens list", "tokens revoke", "version", "whoami",
	}, leaves, "every command, once")

	// The docs' table of commands names each one (completion all at once).
	doc, err := os.ReadFile("../../docs/cli.md")
	require.NoError(t, err)
	for _, leaf := range leaves {
		if leaf == "help" || strings.HasPrefix(leaf, "completion ") {
			continue
		}
		named := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(leaf) + "[` ]").Match(doc)
		require.True(t, named, "docs/cli.md's table of commands has no row for %q", leaf)
	}
	require.True(t, strings.Contains(string(doc), "| `completion bash\\|zsh\\|fish\\|powershell`"),
		"docs/cli.md's table of commands has no row for completion")
}
