// Command foundry runs any set of Foundry modules in one process; by default
// all of them (-target=all) on embedded SQLite under ./data.
// "foundry migrate" applies the selected modules' migrations and exits.
// Called with a client command instead ("foundry ideas list", "foundry
// status"; see docs/cli.md), it is Foundry's command-line client.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() {
	if cli.IsCommand(os.Args[1:]) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
		stop()
		os.Exit(code)
	}
	if msg := cli.Unknown(os.Args[1:]); msg != "" {
		fmt.Fprintln(os.Stderr, "foundry: "+msg)
		os.Exit(cli.ExitUsage)
	}
	app.Main("foundry", allinone.Modules()...)
}
