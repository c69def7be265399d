// Package cli is the command-line client of Foundry: the same foundry
// binary, called with a command name (foundry ideas list) instead of server
// flags. Every command works over REST through the gateway or over gRPC
// straight to the services, and prints a table or, with --json, the API's
// JSON.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Exit codes. Scripts can tell "I called it wrong" from "Foundry said no"
// from "Foundry is not there".
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFailed: Foundry answered with an error (its detail is printed).
	ExitFailed = 1
	// ExitUsage: the command line or the configuration is wrong; nothing
	// was sent.
	ExitUsage = 2
	// ExitUnavailable: Foundry could not be reached, answered that it is
	// not ready (503), or did not become ready in time (status --wait).
	ExitUnavailable = 3
	// ExitInterrupted: the context ended first (Ctrl-C), as shells count
	// a death by SIGINT (128 + 2).
	ExitInterrupted = 130
)

// commandNames are the first arguments that make the foundry binary a
// client instead of a server. Besides the commands: help, and cobra's
// hidden __complete commands, which the shell completion scripts run.
var commandNames = map[string]bool{
	"ideas": true, "tasks": true, "contributions": true, "cc": true, "status": true,
	"tokens": true, "whoami": true, "logout": true, "incidents": true, "audit": true,
	"completion": true, "help": true,
	cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true,
}

// Unknown says what is wrong with args when their first word is neither a
// client command nor the server's (flags, migrate): "foundry register"
// gets this, exit ExitUsage, instead of the server's "unexpected argument".
// "" when args are a client's or the server's.
func Unknown(args []string) string {
	if len(args) == 0 || args[0] == "migrate" || strings.HasPrefix(args[0], "-") || commandNames[args[0]] {
		return ""
	}
	var names []string
	for name := range commandNames {
		if !strings.HasPrefix(name, "__") { // shell completion's own
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return fmt.Sprintf("unknown command %q\n  client commands: %s (foundry help)\n"+
		"  the server: foundry [flags] (foundry -h), foundry migrate [up|status] [flags]", args[0], strings.Join(names, ", "))
}

// IsCommand reports whether args (the arguments after the program name)
// name a client command. Anything else (no arguments, server flags such as
// -target=all or -h, the server's migrate command) is left to the server.
func IsCommand(args []string) bool {
	return len(args) > 0 && commandNames[args[0]]
}

// Execute runs the client with args (after the program name), writing
// results to stdout and messages to stderr, reading the environment
// through getenv, and returns the process's exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	e := &env{stdout: stdout, stderr: stderr, getenv: getenv}
	root := e.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if e.client != nil {
		_ = e.client.close()
	}
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil {
		// Whatever the command failed with, it is because it was stopped.
		fmt.Fprintln(stderr, "foundry: interrupted")
		return ExitInterrupted
	}
	code := exitCode(err)
	fmt.Fprintf(stderr, "foundry: %v\n", err)
	if code == ExitUsage && cmd != nil {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// env is one run of the client: its streams, environment and, once a
// command runs, its settings and connection.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string

	flags   globalFlags
	cfg     config
	client  *client
	jsonOut bool
}

// globalFlags are the flags every command takes besides the connection
// settings (which config.go declares).
type globalFlags struct {
	configPath     string
	requestTimeout time.Duration
}

func (e *env) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "foundry",
		Short: "Foundry's command-line client",
		Long: `Foundry's command-line client: ideas, tasks, contributions, credits, the
emergency freeze and the audit chain.

It talks REST to the gateway (--url, default http://127.0.0.1:8080), or gRPC
straight to the services when --grpc-addr is set (with the service key).
Settings come from flags, then FOUNDRY_* environment variables, then the
config file. Run 'foundry -h' for the server's own flags.`,
		SilenceErrors: true, // Execute prints errors, with the exit code's class
		SilenceUsage:  true, // a refused request is no reason to print usage
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&e.flags.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/foundry/cli.json, else ~/.config/foundry/cli.json; also FOUNDRY_CLI_CONFIG)")
	pf.DurationVar(&e.flags.requestTimeout, "request-timeout", 30*time.Second, "time limit of one request")
	pf.BoolVar(&e.jsonOut, "json", false, "print the API's JSON instead of a table")
	registerSettingFlags(pf)

	root.AddCommand(e.ideasCommand(), e.tasksCommand(), e.contributionsCommand(), e.ccCommand(), e.statusCommand(),
		e.tokensCommand(), e.whoamiCommand(), e.logoutCommand(), e.incidentsCommand(), e.auditCommand())
	return root
}

// action is the RunE of a command that talks to Foundry: it resolves the
// settings and connects, then runs body. (Not a PersistentPreRunE: help and
// shell completion must work whatever the configuration says.)
func (e *env) action(body func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, err := resolveConfig(cmd.Flags(), e.flags.configPath, e.getenv)
		if err != nil {
			return err
		}
		c, err := newClient(cfg, e.flags.requestTimeout)
		if err != nil {
			return err
		}
		e.cfg, e.client = cfg, c
		return body(cmd.Context(), args)
	}
}

// usageError is a mistake on the command line or in the configuration.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usageError.
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCode classifies err. Errors cobra returns itself (unknown command,
// wrong number of arguments) are usage errors, like every error that is
// neither an answer of Foundry's nor a failure to reach it.
func exitCode(err error) int {
	var api *apiError
	if errors.As(err, &api) {
		if api.Status == http.StatusServiceUnavailable {
			return ExitUnavailable
		}
		return ExitFailed
	}
	var broken *brokenChainError
	var bad *logError
	if errors.As(err, &broken) || errors.As(err, &bad) {
		return ExitFailed
	}
	var down *unreachableError
	var late *waitError
	if errors.As(err, &down) || errors.As(err, &late) {
		return ExitUnavailable
	}
	return ExitUsage
}
