package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

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
and keep the session token the API answers, once, as "token" in the config
file: --config, else FOUNDRY_CLI_CONFIG, else $XDG_CONFIG_HOME/foundry/cli.json
(~/.config/foundry/cli.json), written with mode 0600. The commands that
follow then act as the new contributor (FOUNDRY_TOKEN and --token still win
over the file).

A config file that already holds a token is left alone and nothing is sent,
since a session cannot be recovered once its token is lost: log out first
(foundry logout forgets the token it used from the file), name another file
with --config, or give --no-store, which keeps nothing and prints the token.`,
		Example: `  foundry register ada                          # the session is kept in the config file
  ADA=$(foundry register ada -o id)               # the contributor's id
  foundry register bob --no-store -o json | jq -r .session_token`,
		Args: args("HANDLE"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		var path string
		if !noStore {
			var err error
			if path, err = e.tokenFile(cmd); err != nil {
				return err
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
		if err := updateConfigFile(path, func(v map[string]string) { v["token"] = resp.GetSessionToken() }); err != nil {
			return &keepError{handle: resp.GetHandle(), contributor: resp.GetContributorId(), path: path, token: resp.GetSessionToken(), err: err}
		}
		if err := e.printRegistration(raw); err != nil {
			return err
		}
		e.note("session token kept in %s: the commands that follow act as %s\n", path, resp.GetHandle())
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

// tokenFile is the config file register keeps the session token in, or a
// usage error saying why it cannot: there is none, or it holds a token
// already.
func (e *env) tokenFile(cmd *cobra.Command) (string, error) {
	given := cmd.Flags().Changed("config")
	path, _ := configFilePath(given, e.flags.configPath, e.getenv)
	if path == "" {
		if given {
			return "", usagef("--config= names no config file to keep the session token in: name one, or give --no-store to print the token")
		}
		return "", usagef("there is no config file to keep the session token in (HOME and XDG_CONFIG_HOME are unset): " +
			"name one with --config, or give --no-store to print the token")
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	if err != nil {
		return "", usagef("config file: %v", err)
	}
	values, err := parseConfigFile(path, raw)
	if err != nil {
		return "", usageError{err}
	}
	if strings.TrimSpace(values["token"]) != "" {
		return "", usagef("%s already holds a token, which a new session would replace for good: foundry logout first "+
			"(or remove \"token\" from the file), name another file with --config, or give --no-store to print the new token", path)
	}
	return path, nil
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

func (e *env) logoutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "Revoke the configured session token (and forget it, when the config file held it)",
		Long: `Revoke the configured session token at once. When the token came from the
config file (foundry register keeps it there), it is removed from the file
too; a token given by --token or FOUNDRY_TOKEN is the shell's to forget.`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		raw, err := e.client.call(ctx, opLogout, &ledgerv1.LogoutRequest{}, &ledgerv1.LogoutResponse{}, callOpts{})
		if err != nil {
			return err
		}
		if path := e.cfg.TokenFile; path != "" {
			err := updateConfigFile(path, func(v map[string]string) {
				if strings.TrimSpace(v["token"]) == e.cfg.Token {
					delete(v, "token")
				}
			})
			if err != nil {
				return &fileError{fmt.Errorf("the session is revoked, but its token is still in the config file: %w", err)}
			}
			e.note("the session token is removed from %s\n", path)
		}
		return e.printObject(raw)
	})
	return cmd
}
