package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
)

// --- registration and sessions ---------------------------------------------------

// keepError is a registration whose session token could not be kept: the
// contributor exists and the token is in the message, the one place it
// still is.
type keepError struct {
	handle, contributor, path, token string
	err                              error
}

func (k *keepError) Error() string {
	return fmt.Sprintf("registered %s (contributor %s), but its session token could not be kept in %s: %v\n"+
		"  the session token, shown only now: %s\n"+
		"  keep it yourself: \"token\" in a config file, or FOUNDRY_TOKEN", k.handle, k.contributor, k.path, k.err, k.token)
}

func (k *keepError) Unwrap() error { return k.err }

// fileError is a file of the client's own that could not be written after
// Foundry did what was asked: no usage error, since the request took effect.
type fileError struct{ err error }

func (f *fileError) Error() string { return f.err.Error() }
func (f *fileError) Unwrap() error { return f.err }

func (e *env) registerCommand() *cobra.Command {
	var noStore bool
	cmd := &cobra.Command{
		Use:   "register HANDLE",
		Short: "Register a contributor and keep its session token in the config file",
		Long: `Register a new contributor with HANDLE ([a-z0-9_-]{3,40}, as the API asks)
and keep the session token the API answers, once, in the config file, for
the server the client talks to (--url, or --grpc-addr): --config, else
FOUNDRY_CLI_CONFIG, else $XDG_CONFIG_HOME/foundry/cli.json
(~/.config/foundry/cli.json), written with mode 0600. The commands that
follow then act as the new contributor on that server (FOUNDRY_TOKEN and
--token still win over the file).

A config file that already keeps a token for the server is left alone and
nothing is sent, since a session cannot be recovered once its token is
lost: log out first (foundry logout forgets the token it used from the
file), name another file with --config, or give --no-store, which keeps
nothing and prints the token.`,
		Example: `  foundry register ada                          # the session is kept in the config file
  ADA=$(foundry register ada -o id)               # the contributor's id
  foundry register bob --no-store -o json | jq -r .session_token`,
		Args: args("HANDLE"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		server := e.cfg.server()
		var path string
		if !noStore {
			var held string
			var err error
			if path, held, err = e.tokenFile(cmd, server); err != nil {
				return err
			}
			switch {
			case path == "" && cmd.Flags().Changed("config"):
				return usagef("--config= names no config file to keep the session token in: name one, or give --no-store to print the token")
			case path == "":
				return usagef("there is no config file to keep the session token in (HOME and XDG_CONFIG_HOME are unset): " +
					"name one with --config, or give --no-store to print the token")
			case held != "":
				return usagef("%s already keeps a token for %s, which a new session would replace for good: foundry logout first, "+
					"name another file with --config, or give --no-store to print the new token", path, server)
			}
		}
		resp := &ledgerv1.RegisterResponse{}
		raw, err := e.client.call(ctx, opRegister, &ledgerv1.RegisterRequest{Handle: a[0]}, resp, callOpts{})
		if err != nil {
			return err
		}
		if path == "" {
			return e.printObject(raw)
		}
		if err := updateConfigFile(path, func(f *configFile) { f.setServerToken(server, resp.GetSessionToken()) }); err != nil {
			return &keepError{handle: resp.GetHandle(), contributor: resp.GetContributorId(), path: path, token: resp.GetSessionToken(), err: err}
		}
		if err := e.printRegistration(raw); err != nil {
			return err
		}
		e.note("session token kept in %s for %s: the commands that follow act as %s there\n", path, server, resp.GetHandle())
		switch {
		case cmd.Flags().Changed("token"):
			e.note("(but --token wins over the file: leave it out to act as %s)\n", resp.GetHandle())
		case e.getenv("FOUNDRY_TOKEN") != "":
			e.note("(but FOUNDRY_TOKEN is set and wins over the file: unset it to act as %s)\n", resp.GetHandle())
		}
		return nil
	})
	cmd.Flags().BoolVar(&noStore, "no-store", false, "keep the session token nowhere: print it (shown only once)")
	return cmd
}

// printRegistration prints the registration's answer; the table leaves out
// the session token, which the config file now keeps (-o json still
// prints the API's answer whole).
func (e *env) printRegistration(raw []byte) error {
	if e.machine() {
		return e.printJSON(raw)
	}
	fields, err := objectFields(raw)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, f := range fields {
		if f.name != "session_token" {
			rows = append(rows, []string{f.name, cell(f.value)})
		}
	}
	return e.table(nil, rows)
}
