// Package cli is the command-line client of Foundry: the same foundry
// binary, called with a command name (foundry ideas list) instead of server
// flags. Every command works over REST through the gateway or over gRPC
// straight to the services, and prints a table or, with -o json (--json),
// the API's JSON, or with -o id the ids of what it created or listed.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/itchyny/gojq"
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

// commandNames are the first words the foundry binary knows: the tree's
// commands (the client's and the server's serve and migrate) and their
// aliases, plus those cobra adds when it runs (help, completion, and the
// hidden __complete commands the shell completion scripts run). Read from
// the tree, so a new command cannot be left out.
var commandNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{"help": true, "completion": true,
		cobra.ShellCompRequestCmd: true, cobra.ShellCompNoDescRequestCmd: true}
	for _, c := range (&env{}).rootCommand().Commands() {
		names[c.Name()] = true
		for _, a := range c.Aliases {
			names[a] = true
		}
	}
	return names
})

// Unknown says what is wrong with args when their first word is no
// command (and no flag: see IsServer): "foundry regster" gets this, exit
// ExitUsage, instead of cobra's terser "unknown command". "" when args
// are a command's or the server's.
func Unknown(args []string) string {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || commandNames()[args[0]] {
		return ""
	}
	var names []string
	for name := range commandNames() {
		if !strings.HasPrefix(name, "__") && name != "serve" && name != "migrate" { // shell completion's own; the server's below
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return fmt.Sprintf("unknown command %q\n  client commands: %s (foundry help)\n"+
		"  the server: foundry serve [flags] (foundry serve -h), foundry migrate [up|status] [flags]", args[0], strings.Join(names, ", "))
}

// Execute runs the client with args (after the program name), reading
// stdin (foundry login's token; nil for none), writing results to stdout
// and messages to stderr, reading the environment through getenv, and
// returns the process's exit code.
// serve and migrate are in the tree (for help) but refuse to run: the
// server comes with Main.
func Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return execute(ctx, args, stdin, stdout, stderr, getenv, nil)
}

func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, server Server) int {
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, server: server}
	root := e.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if e.client != nil {
		_ = e.client.close()
	}
	if err == nil {
		return ExitOK
	}
	if code, ok := errors.AsType[exitCodeError](err); ok {
		return code.code // the server said why
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
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// server runs serve and migrate; nil in a build without the server.
	server Server

	flags  globalFlags
	cfg    config
	client *client
	// format is the output's (-o, or --json), idPath where the answer
	// holds the ids -o id prints (the command's idAnnotation).
	format format
	idPath string
	// quiet (-q) keeps hints and progress off stderr.
	quiet bool
	// jq is --jq's compiled filter over the JSON answer; nil without one.
	jq *gojq.Code
}

// globalFlags are the flags every command takes besides the connection
// settings (which config.go declares).
type globalFlags struct {
	configPath     string
	requestTimeout time.Duration
	json           bool
	jq             string
}

func (e *env) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "foundry",
		Short: "Foundry's server and command-line client",
		Long: `Foundry: 'foundry serve' runs the server and 'foundry migrate' applies
its schema migrations; every other command is the command-line client:
registration and login, ideas, tasks, assets, contributions, contributors,
distributions, credits, API tokens, the emergency freeze and the audit log;
'foundry api' for any other route.

The client talks REST to the gateway (--url, default http://127.0.0.1:8080),
or gRPC straight to the services when --grpc-addr is set (with the service
key). Settings come from flags, then FOUNDRY_* environment variables, then
the config file. Answers print as tables, or with -o json as the API's JSON,
or with -o id as the ids of what was created or listed, one per line.

The server's flags are single-dash Go flags: 'foundry serve -h' lists them.
'foundry' alone, or with a flag first ('foundry -target=…'), is 'foundry serve'.`,
		SilenceErrors:     true, // Execute prints errors, with the exit code's class
		SilenceUsage:      true, // a refused request is no reason to print usage
		PersistentPreRunE: e.resolveOutput,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&e.flags.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/foundry/cli.json, else ~/.config/foundry/cli.json; also FOUNDRY_CLI_CONFIG)")
	pf.DurationVar(&e.flags.requestTimeout, "request-timeout", 30*time.Second, "time limit of one request")
	e.format = formatTable
	pf.VarP(&choiceFlag{one: (*string)(&e.format), words: formats}, "format", "o",
		"how to print the answer: table (for people), json (the API's answer) or id (what was created or listed, one per line)")
	_ = root.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	pf.BoolVar(&e.flags.json, "json", false, "print the API's JSON instead of a table (the same as -o json)")
	pf.BoolVarP(&e.quiet, "quiet", "q", false, "print no hints and no progress on stderr (errors still are)")
	pf.StringVar(&e.flags.jq, "jq", "", "filter the JSON answer with a jq expression (implies -o json; strings print bare)")
	registerSettingFlags(pf)

	root.AddCommand(withIDs(e.registerCommand(), "contributor_id"), e.loginCommand(), e.whoamiCommand(), e.logoutCommand(),
		e.ideasCommand(), e.tasksCommand(), e.promptsCommand(), e.workerCommand(), e.assetsCommand(), e.contributionsCommand(), e.contributorsCommand(), e.distributionsCommand(),
		e.ccCommand(), e.tokensCommand(), e.statusCommand(), e.incidentsCommand(), e.auditCommand(),
		e.gatewayCommand(), e.apiCommand(), e.versionCommand())
	root.AddCommand(e.serverCommands()...)
	return root
}

// resolveOutput settles the output's format before a command runs: --json
// is -o json, and -o id only for a command whose answer holds ids, so a
// script that asks for ids of something that has none learns it before
// anything is sent.
func (e *env) resolveOutput(cmd *cobra.Command, _ []string) error {
	if e.flags.json {
		if cmd.Flags().Changed("format") && e.format != formatJSON {
			return usagef("--json and -o %s ask for two formats: give one", e.format)
		}
		e.format = formatJSON
	}
	if e.flags.jq != "" {
		if cmd.Flags().Changed("format") && e.format != formatJSON {
			return usagef("--jq filters the JSON answer: it does not go with -o %s", e.format)
		}
		q, err := gojq.Parse(e.flags.jq)
		if err == nil {
			e.jq, err = gojq.Compile(q)
		}
		if err != nil {
			return usagef("--jq: %v", err)
		}
		e.format = formatJSON
	}
	e.idPath = cmd.Annotations[idAnnotation]
	if e.format == formatID && e.idPath == "" {
		return usagef("%s prints no ids: -o id is for the commands that create, show or list something with an id; use -o json",
			cmd.CommandPath())
	}
	return nil
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
	var keep *keepError
	var file *fileError
	if errors.As(err, &broken) || errors.As(err, &bad) || errors.As(err, &keep) || errors.As(err, &file) {
		return ExitFailed
	}
	var down *unreachableError
	var late *waitError
	if errors.As(err, &down) || errors.As(err, &late) {
		return ExitUnavailable
	}
	return ExitUsage
}
