package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Server runs Foundry's server with the server's own arguments: its
// single-dash flags ("-target=ledger"), or "migrate" and what follows it.
// It handles its own signals (a second Ctrl-C kills it) and returns the
// process's exit code. The cli module imports no server package, so the
// binary (cmd/foundry) hands it in.
type Server func(ctx context.Context, args []string) int

// Main is the foundry binary: one cobra tree of the client's commands and
// the server's (serve, migrate). For compatibility with every script,
// manifest and Makefile written before serve existed, arguments that are
// none at all or start with a flag other than -h/--help are the server's,
// as "serve" would take them: "foundry -target=ledger" is "foundry serve
// -target=ledger". An unknown first word is a usage error (ExitUsage).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, server Server) int {
	if msg := Unknown(args); msg != "" {
		fmt.Fprintln(stderr, "foundry: "+msg)
		return ExitUsage
	}
	if IsServer(args) {
		// Not under the client's signal handling: the server has its own.
		return server(context.Background(), args)
	}
	if args[0] == "-help" {
		args = append([]string{"--help"}, args[1:]...) // Go's flag package took it; pflag would read -h -e -l -p
	}
	ctx := context.Background()
	if args[0] != "serve" && args[0] != "migrate" {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	return execute(ctx, args, stdin, stdout, stderr, getenv, server)
}

// IsServer reports whether args (after the program name) are a server
// invocation without a command: none at all, or a first argument that is a
// flag other than help's (-h, -help, --help print the cobra tree's help)
// unless the flags before the first word are all the client's global ones
// and that word is a command ("foundry -q -o json ideas list" is the
// client's; "foundry -target=ledger" the server's).
func IsServer(args []string) bool {
	if len(args) == 0 {
		return true
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return false
	}
	return strings.HasPrefix(args[0], "-") && !globalFlagsThenCommand(args)
}

// globalFlagsThenCommand reports whether args are client global flags (as
// pflag reads them: --name, --name=value, --name value, -x, -xvalue, -x
// value) followed by a command's name. The server's flags are Go's
// single-dash long names (-target=…), which pflag would read as a run of
// shorthands: any flag the client does not know ends the scan as the
// server's, so no invocation that ran the server before runs the client.
func globalFlagsThenCommand(args []string) bool {
	flags := (&env{}).rootCommand().PersistentFlags()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			return commandNames()[a]
		}
		var (
			f        *pflag.Flag
			hasValue bool
		)
		if long, ok := strings.CutPrefix(a, "--"); ok {
			name, _, eq := strings.Cut(long, "=")
			f, hasValue = flags.Lookup(name), eq
		} else {
			short := a[1:]
			f, hasValue = flags.ShorthandLookup(short[:1]), len(short) > 1
			if f != nil && f.NoOptDefVal != "" && hasValue {
				return false // "-quiet" is a Go long flag (the server's), not -q and more
			}
		}
		if f == nil {
			return false
		}
		if !hasValue && f.NoOptDefVal == "" {
			i++ // the flag's value is the next argument
		}
	}
	return false
}

// exitCodeError ends a command with a code whose message, if any, was
// printed already (the server's).
type exitCodeError struct{ code int }

func (e exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// serverCommands are serve and migrate: their arguments go to the server
// untouched (DisableFlagParsing), since its flags are Go's single-dash
// ones, each with an environment variable, parsed by the server's own
// flag set.
func (e *env) serverCommands() []*cobra.Command {
	serve := &cobra.Command{
		Use:   "serve [server flags]",
		Short: "Run Foundry's server (every module, or those -target names)",
		Long: `Run Foundry's server: by default every module (-target=all) in this
process, on embedded SQLite under ./data, until SIGINT or SIGTERM.

The server's flags are single-dash Go flags, each also a FOUNDRY_*
environment variable (a flag wins over its variable): 'foundry serve -h'
lists them. 'foundry -target=…' (any first argument that is a flag) and
'foundry' alone are the same as 'foundry serve …'.`,
		Example: "  foundry serve\n  foundry serve -target=portfolio,gateway -ledger-addr=127.0.0.1:9091",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && args[0] == "migrate" {
				return usagef("foundry serve takes the server's flags: to apply migrations, run foundry migrate")
			}
			return e.runServer(cmd.Context(), args)
		},
	}
	migrate := &cobra.Command{
		Use:   "migrate [up|status] [server flags]",
		Short: "Apply the modules' schema migrations (up), or list them (status), and exit",
		Long: `Apply the selected modules' pending schema migrations and exit (up, the
default; what a Kubernetes migration Job runs), or, with status, print each
module's schema version and pending migrations and change nothing.

The flags are the server's ('foundry serve -h'; -target, -database-url,
-data-dir, …) and come after the action.`,
		Example: "  foundry migrate\n  foundry migrate status -target=ledger -database-url=postgres://…",
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.runServer(cmd.Context(), append([]string{"migrate"}, args...))
		},
	}
	for _, c := range []*cobra.Command{serve, migrate} {
		c.DisableFlagParsing = true
		c.DisableFlagsInUseLine = true
		// The client's flags mean nothing here: the help says what the
		// command does and where the server's flags are listed.
		c.SetHelpFunc(func(c *cobra.Command, _ []string) {
			fmt.Fprintf(c.OutOrStdout(), "%s\n\nUsage:\n  %s\n\nExamples:\n%s\n", c.Long, c.UseLine(), c.Example)
		})
	}
	return []*cobra.Command{serve, migrate}
}

// runServer runs the server, or says that this build has none.
func (e *env) runServer(ctx context.Context, args []string) error {
	if e.server == nil {
		return usagef("this build of foundry has no server")
	}
	if code := e.server(ctx, args); code != ExitOK {
		return exitCodeError{code}
	}
	return nil
}
