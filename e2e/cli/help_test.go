package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
		if len(path) == 1 && (path[0] == "serve" || path[0] == "migrate") {
			// Their arguments, --help too, are the server's (the binary's
			// serve -h is TestServerHelp's): foundry help serve is cobra's.
			out := ok(t, env, "help", path[0])
			require.Contains(t, out, "Usage:\n  foundry "+path[0]+" [", path[0])
			require.Contains(t, out, "'foundry serve -h'", path[0])
			leaves = append(leaves, path[0])
			return
		}
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
	require.Equal(t, []string{"api", "assets", "audit", "cc", "completion", "contributions", "contributors", "distributions", "gateway", "help", "ideas",
		"incidents", "login", "logout", "migrate", "prompts", "register", "serve", "status", "tasks", "tokens", "version", "whoami", "worker"}, availableCommands(out))
	walk(nil)
	require.Equal(t, []string{
		"api", "assets create", "assets list", "assets show",
		"audit checkpoint", "audit keygen", "audit list", "audit repair", "audit verify", "audit witness",
		"cc balance", "cc deposit", "cc rate", "cc stake", "cc supply", "cc unstake", "cc withdraw",
		"completion bash", "completion fish", "completion powershell", "completion zsh",
		"contributions create", "contributions list", "contributions review", "contributions show", "contributors list",
		"distributions create", "distributions list", "distributions show", "gateway keygen",
		"help", "ideas advance", "ideas create", "ideas impact", "ideas list", "ideas show",
		"incidents freeze", "incidents list", "incidents status", "incidents unfreeze",
		"login", "logout", "migrate", "prompts create", "prompts list", "prompts show", "register", "serve", "status",
		"tasks cancel", "tasks claim", "tasks complete", "tasks create", "tasks fail", "tasks list", "tasks retry", "tasks show",
		"tokens create", "tokens list", "tokens revoke", "version", "whoami", "worker",
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

// TestServerHelp runs the built binary: foundry -h is the cobra tree's
// help, foundry serve -h (and the server's flags given first, as the
// Makefile and the manifests give them) the server's flag set.
func TestServerHelp(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "foundry")
	build := exec.Command("go", "build", "-o", bin, "./foundry")
	build.Dir = "../../cmd"
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	foundry := func(args ...string) (code int, stdout, stderr string) {
		var o, e strings.Builder
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		cmd.Env = []string{"FOUNDRY_URL=http://" + allinonetest.FreeAddr(t)} // no variable of this machine's
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), o.String(), e.String()
		}
		require.NoError(t, err)
		return 0, o.String(), e.String()
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		code, stdout, stderr := foundry(args...)
		require.Equal(t, 0, code, "%q: %s", args, stderr)
		require.Contains(t, stdout, "Usage:\n  foundry [command]", args)
		require.Regexp(t, `(?m)^  serve +Run Foundry's server`, stdout, args)
		require.NotContains(t, stdout+stderr, "-target string", args)
	}
	for _, args := range [][]string{{"serve", "-h"}, {"serve", "--help"}, {"migrate", "-h"}, {"-target=all", "-h"}} {
		code, stdout, stderr := foundry(args...)
		require.Equal(t, 0, code, "%q: %s", args, stderr)
		require.Empty(t, stdout, args)
		require.Contains(t, stderr, "Usage of foundry:\n", args)
		require.Regexp(t, `(?m)^  -target string$`, stderr, args)
		require.Contains(t, stderr, "(env FOUNDRY_GRPC_ADDR)", args)
	}
	// The server's errors stay the server's: its message, its exit code.
	code, _, stderr := foundry("-target=nope")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "foundry: unknown target \"nope\"")
	code, _, stderr = foundry("serve", "-bogus")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "foundry: flag provided but not defined: -bogus\n")
	code, _, stderr = foundry("migrate", "sideways")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "unknown migrate action \"sideways\"")
	code, _, stderr = foundry("regster")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "foundry: unknown command \"regster\"")
}
