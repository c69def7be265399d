package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
)

// --- login and logout: a token kept per server ----------------------------------

// maxTokenInput bounds what login --with-token reads: a token is 68
// characters; a megabyte piped in by mistake is refused, not read whole.
const maxTokenInput = 4 << 10

func (e *env) loginCommand() *cobra.Command {
	var withToken bool
	cmd := &cobra.Command{
		Use:   "login [--with-token]",
		Short: "Keep a session token or an API token you have, once Foundry accepts it",
		Long: `Keep a token you already have, a contributor's session token (foundry
register answers it) or an API token (foundry tokens create), in the config
file, for the server the client talks to (--url, or --grpc-addr): the
commands that follow send it there, and to no other server.

The token is read from standard input with --with-token (a file or a pipe:
foundry login --with-token < token.txt), or else asked for, without echo,
when standard input is a terminal. It is never an argument: a command line
stays in the shell's history and other users see it in the process list
(--token works, with a warning).

Foundry is asked who the token is (GET /api/whoami) before anything is
kept: a token it refuses (unknown, revoked, expired) is exit 1 and nothing
is written. The answer is printed as whoami prints it.

A config file that already keeps another token for the server is left
alone: foundry logout first (it revokes a session, and forgets the token),
or name another file with --config. In the commands that follow,
FOUNDRY_TOKEN and --token still win over the file.`,
		Example: `  foundry login                                  # asks for the token
  foundry login --with-token < worker.token
  pass show foundry/ada | foundry login --with-token --url https://foundry.example.com`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		fromFlag := cmd.Flags().Changed("token")
		if fromFlag && withToken {
			return usagef("--token and --with-token each give the token: give one (--with-token keeps it out of the shell's history)")
		}
		server := e.cfg.server()
		path, held, err := e.tokenFile(cmd, server)
		if err != nil {
			return err
		}
		if path == "" {
			return usagef("there is no config file to keep the token in (HOME and XDG_CONFIG_HOME are unset, or --config=): name one with --config")
		}
		refuse := func() error {
			return usagef("%s already keeps a token for %s: foundry logout first (it revokes a session, and forgets the token), "+
				"or name another file with --config", path, server)
		}
		var token string
		switch {
		case fromFlag:
			if token = e.cfg.Token; token == "" {
				return usagef("--token= gives no token: give it on standard input with --with-token, or at the prompt")
			}
			// Not a hint (-q does not hide it): the secret is already in the
			// history, and only its owner can do something about it.
			fmt.Fprintln(e.stderr, "warning: a token given as --token stays in the shell's history and shows in the process list: "+
				"prefer foundry login --with-token < FILE, or the prompt")
		case withToken:
			if token, err = readTokenInput(e.stdin); err != nil {
				return err
			}
		default:
			if held != "" {
				return refuse() // before asking for a token that could not be kept
			}
			if token, err = e.promptToken(ctx); err != nil {
				return err
			}
		}
		if held != "" && held != token {
			return refuse()
		}

		// Only the candidate goes: not the configured token, and not the
		// administrator key, which would answer "admin" for any token.
		e.client.cfg.Token, e.client.cfg.APIKey = token, ""
		who := &ledgerv1.GetPrincipalResponse{}
		raw, err := e.client.call(ctx, opWhoamiToken, &ledgerv1.GetPrincipalRequest{}, who, callOpts{})
		if api, ok := errors.AsType[*apiError](err); ok && (api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden) {
			return fmt.Errorf("%s refused the token, so it is not kept: %w", server, err)
		}
		if err != nil {
			return err
		}
		if held == "" {
			if err := updateConfigFile(path, func(f *configFile) { f.setServerToken(server, token) }); err != nil {
				return &fileError{fmt.Errorf("%s accepted the token, but it could not be kept: %w", server, err)}
			}
		}
		if err := e.printObject(raw); err != nil {
			return err
		}
		as := who.GetHandle().GetValue() + " (a session)"
		if who.GetKind() != "session" {
			as = fmt.Sprintf("%s (an API token, role %s)", who.GetName().GetValue(), who.GetRole())
		}
		if held == "" {
			e.note("token kept in %s for %s: the commands that follow act as %s there\n", path, server, as)
		} else {
			e.note("%s already kept this token for %s, which acts as %s\n", path, server, as)
		}
		if !fromFlag && e.getenv("FOUNDRY_TOKEN") != "" {
			e.note("(but FOUNDRY_TOKEN is set and wins over the file: unset it to act as %s)\n", as)
		}
		return nil
	})
	cmd.Flags().BoolVar(&withToken, "with-token", false, "read the token from standard input (a file or a pipe) rather than asking for it")
	return cmd
}

// readTokenInput reads login --with-token's token: all of in, spaces and
// line ends around it dropped; it must be one word.
func readTokenInput(in io.Reader) (string, error) {
	raw, err := io.ReadAll(io.LimitReader(in, maxTokenInput+1))
	if err != nil {
		return "", usagef("--with-token: reading standard input: %v", err)
	}
	if len(raw) > maxTokenInput {
		return "", usagef("--with-token: standard input holds more than %d bytes, which is no token", maxTokenInput)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", usagef("--with-token: standard input holds no token (foundry login --with-token < FILE)")
	}
	if strings.ContainsFunc(token, unicode.IsSpace) {
		return "", usagef("--with-token: standard input holds more than one word; give the token alone")
	}
	return token, nil
}

// promptToken asks for the token on stderr and reads it from the terminal
// on stdin without echo. A reader that is no file but says it is a
// terminal (IsTerminal, as a program embedding the client may) is read a
// line, with what echo it has.
func (e *env) promptToken(ctx context.Context) (string, error) {
	f, isFile := e.stdin.(*os.File)
	fileTerm := isFile && term.IsTerminal(int(f.Fd()))
	if t, ok := e.stdin.(interface{ IsTerminal() bool }); !fileTerm && (!ok || !t.IsTerminal()) {
		return "", usagef("standard input is not a terminal to ask for the token on: give it there with --with-token " +
			"(foundry login --with-token < FILE)")
	}
	fmt.Fprint(e.stderr, "Token (a session token or an API token; not echoed): ")
	var (
		line string
		err  error
	)
	if fileTerm {
		line, err = readPassword(ctx, int(f.Fd()))
		fmt.Fprintln(e.stderr) // the Enter that echo did not show
	} else {
		line, err = bufio.NewReader(e.stdin).ReadString('\n')
		if errors.Is(err, io.EOF) && line != "" {
			err = nil
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", usagef("reading the token: %v", err)
	}
	token := strings.TrimSpace(line)
	if token == "" || strings.ContainsFunc(token, unicode.IsSpace) {
		return "", usagef("that is no token: paste the token alone")
	}
	return token, nil
}

// readPassword reads a line from the terminal fd without echo. Ctrl-C
// ends the client's context rather than the process (Main catches
// SIGINT), and term.ReadPassword would go on reading with echo off: the
// read is left behind and the terminal's state put back here, so the shell
// gets its echo back.
func readPassword(ctx context.Context, fd int) (string, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := term.ReadPassword(fd)
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return string(r.b), r.err
	case <-ctx.Done():
		_ = term.Restore(fd, state)
		return "", ctx.Err()
	}
}

// tokenFile is the config file register and login keep a token in for
// server, and the token it keeps for that server already ("" for none).
// The path is "" when there is no file to keep one in (no HOME nor
// XDG_CONFIG_HOME, or --config=): the command says what to do instead.
func (e *env) tokenFile(cmd *cobra.Command, server string) (path, held string, err error) {
	path, _ = configFilePath(cmd.Flags().Changed("config"), e.flags.configPath, e.getenv)
	if path == "" {
		return "", "", nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, "", nil
	}
	if err != nil {
		return "", "", usagef("config file: %v", err)
	}
	file, err := parseConfigFile(path, raw)
	if err != nil {
		return "", "", usageError{err}
	}
	return path, file.serverToken(server), nil
}

func (e *env) logoutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "logout",
		Short: "Revoke the configured session token, and forget the token the config file keeps",
		Long: `Revoke the configured session token at once, and forget it. When the token
came from the config file (foundry register and foundry login keep it
there, for the server the client talks to), it is removed from the file;
a token given by --token or FOUNDRY_TOKEN is the shell's to forget.

An API token is forgotten but not revoked: the administrator revokes it
(foundry tokens revoke TOKEN_ID). A token of the file that no longer works
(revoked, expired) is forgotten too, with nothing to revoke.`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		raw, err := e.client.call(ctx, opLogout, &ledgerv1.LogoutRequest{}, &ledgerv1.LogoutResponse{}, callOpts{})
		if api, ok := errors.AsType[*apiError](err); ok && api.Status == http.StatusUnauthorized && e.cfg.Token != "" {
			// Only a live session logs out: the token is an API token, or
			// one that no longer works.
			raw, err = e.logoutOther(ctx, err)
		}
		if err != nil {
			return err
		}
		if path := e.cfg.TokenFile; path != "" {
			err := updateConfigFile(path, func(f *configFile) { f.forgetToken(e.cfg.TokenServer, e.cfg.Token) })
			if err != nil {
				return &fileError{fmt.Errorf("the token is still in the config file: %w", err)}
			}
			e.note("the token is removed from %s\n", path)
		}
		return e.printObject(raw)
	})
	return cmd
}

// logoutOther is logout's answer for a configured token that is no live
// session (refused, the logout's 401): an API token, which only an
// administrator revokes, or a token of the config file that no longer
// works; either is then forgotten, and nothing was revoked. Anything else
// is refused.
func (e *env) logoutOther(ctx context.Context, refused error) ([]byte, error) {
	who := &ledgerv1.GetPrincipalResponse{}
	_, err := e.client.call(ctx, opWhoamiToken, &ledgerv1.GetPrincipalRequest{}, who, callOpts{})
	api, _ := errors.AsType[*apiError](err)
	switch {
	case err == nil && who.GetKind() == "token":
		e.note("an API token is not revoked by logout: the administrator revokes it (foundry tokens revoke %s)\n", who.GetTokenId().GetValue())
	case api != nil && api.Status == http.StatusUnauthorized && e.cfg.TokenFile != "":
		e.note("the token no longer works (%s): nothing to revoke\n", api.Detail)
	case err != nil && api == nil:
		return nil, err // Foundry could not say
	default:
		return nil, refused
	}
	return renderMessage(&ledgerv1.LogoutResponse{Revoked: false})
}
