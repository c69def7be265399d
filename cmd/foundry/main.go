// Command foundry is Foundry in one binary: "foundry serve" runs any set of
// Foundry modules in one process, by default all of them (-target=all) on
// embedded SQLite under ./data; "foundry migrate" applies the selected
// modules' migrations and exits; every other command ("foundry ideas
// list", "foundry status"; see docs/cli.md) is Foundry's command-line
// client. "foundry" alone or with server flags first ("foundry
// -target=ledger") is "foundry serve", as before serve existed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, serve))
}

// serve runs the server with its own arguments (flags, or "migrate" and
// its arguments) and returns the exit code app.Main would exit with: 0 for
// -h, 2 for a usage error, 1 for a failure.
func serve(ctx context.Context, args []string) int {
	err := app.Run(ctx, "foundry", allinone.Modules(), args, os.Stdout)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return cli.ExitOK
	case errors.As(err, new(app.UsageError)):
		fmt.Fprintf(os.Stderr, "foundry: %v\n", err)
		return cli.ExitUsage
	default:
		fmt.Fprintf(os.Stderr, "foundry: %v\n", err)
		return cli.ExitFailed
	}
}
