package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// terminalIn is a standard input that says it is a terminal, as a program
// embedding the client may: login asks for the token on it.
type terminalIn struct{ *strings.Reader }

func (terminalIn) IsTerminal() bool { return true }

// TestLogin: login keeps a token the user already has, a session token or
// an API token, once Foundry says who it is, in the config file under the
// server it was checked against; a token Foundry refuses is kept nowhere;
// logout revokes a session and forgets the token, and forgets an API token
// (which only the administrator revokes) or one that stopped working.
// Over both transports, on every engine.
func TestLogin(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine))
		for _, tr := range transports(sys) {
			t.Run(tr.name, func(t *testing.T) {
				login(t, tr.name, tr.env)
			})
		}

		t.Run("a token is kept for one server only", func(t *testing.T) {
			rest, grpc := transports(sys)[0].env, transports(sys)[1].env
			home := t.TempDir()
			session := okJSON(t, rest, "register", "one-server", "--no-store")["session_token"].(string)
			r := runIn(t, strings.NewReader(session), with(rest, "HOME", home), "login", "--with-token")
			require.Equal(t, cli.ExitOK, r.code, r.stderr)
			require.Equal(t, "session", okJSON(t, with(rest, "HOME", home), "whoami")["kind"])
			require.Equal(t, "anonymous", okJSON(t, with(grpc, "HOME", home), "whoami")["kind"],
				"the same Foundry over gRPC is another address: the token kept for the URL does not go there")
		})
	})
}

// login is TestLogin's walk over the transport env names.
func login(t *testing.T, name string, env map[string]string) {
	server := serverOf(env)
	admin := with(env, "FOUNDRY_API_KEY", allinonetest.AdminKey)

	t.Run("a session token, from standard input", func(t *testing.T) {
		handle := "login-" + name
		reg := okJSON(t, env, "register", handle, "--no-store")
		session := reg["session_token"].(string)
		home := t.TempDir()
		ada := with(env, "HOME", home)
		config := filepath.Join(home, ".config", "foundry", "cli.json")

		r := runIn(t, strings.NewReader(session+"\n"), ada, "login", "--with-token")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Regexp(t, row("kind", "session"), r.stdout, "whoami's answer")
		require.Regexp(t, row("handle", handle), r.stdout)
		require.Regexp(t, row("contributor_id", reg["contributor_id"].(string)), r.stdout)
		require.NotContains(t, r.stdout, session)
		require.Equal(t, "token kept in "+config+" for "+server+": the commands that follow act as "+handle+" (a session) there\n", r.stderr)
		require.Equal(t, map[string]any{"servers": map[string]any{server: map[string]any{"token": session}}}, readConfig(t, config))
		require.Equal(t, handle, okJSON(t, ada, "whoami")["handle"])
		require.Equal(t, reg["contributor_id"], okJSON(t, ada, "cc", "balance")["contributor_id"], "the session's own CC")

		// Again with the same token: nothing changes, and it says so.
		r = runIn(t, strings.NewReader(session), ada, "login", "--with-token", "--json")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, `"kind":"session"`)
		require.Equal(t, config+" already kept this token for "+server+", which acts as "+handle+" (a session)\n", r.stderr)

		// Another token while one is kept: refused before anything is sent.
		r = runIn(t, strings.NewReader("fdt_"+strings.Repeat("0", 64)), ada, "login", "--with-token")
		require.Equal(t, cli.ExitUsage, r.code)
		require.Equal(t, "foundry: "+config+" already keeps a token for "+server+": foundry logout first (it revokes a session, "+
			"and forgets the token), or name another file with --config\nRun 'foundry login --help' for usage.\n", r.stderr)
		r = runIn(t, terminalIn{strings.NewReader("never read\n")}, ada, "login")
		require.Equal(t, cli.ExitUsage, r.code)
		require.True(t, strings.HasPrefix(r.stderr, "foundry: "+config+" already keeps a token"), "refused before asking: %q", r.stderr)
		require.Equal(t, session, keptToken(t, config, server))

		// logout revokes the session and forgets it.
		r = run(t, ada, "logout")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Regexp(t, row("revoked", "true"), r.stdout)
		require.Equal(t, "the token is removed from "+config+"\n", r.stderr)
		require.Equal(t, map[string]any{}, readConfig(t, config))

		// The revoked session is refused, and kept nowhere.
		require.Eventually(t, func() bool { return run(t, with(env, "FOUNDRY_TOKEN", session), "whoami").code == cli.ExitFailed },
			5*time.Second, 50*time.Millisecond, "the edge's cache forgets it within a second")
		r = runIn(t, strings.NewReader(session), ada, "login", "--with-token")
		require.Equal(t, cli.ExitFailed, r.code)
		require.Equal(t, "foundry: "+server+" refused the token, so it is not kept: invalid token\n", r.stderr, "a logged-out session is gone")
		require.Empty(t, r.stdout)
		require.Equal(t, map[string]any{}, readConfig(t, config))
	})

	t.Run("an API token, at the prompt; logout forgets it, unrevoked", func(t *testing.T) {
		tokenName := "ci-" + name
		token := strings.TrimSpace(ok(t, admin, "tokens", "create", tokenName, "--role", "worker", "-q"))
		home := t.TempDir()
		ci := with(env, "HOME", home)
		config := filepath.Join(home, ".config", "foundry", "cli.json")

		r := runIn(t, terminalIn{strings.NewReader(token + "\n")}, ci, "login")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Regexp(t, row("kind", "token"), r.stdout)
		require.Regexp(t, row("name", tokenName), r.stdout)
		require.Regexp(t, row("role", "worker"), r.stdout)
		require.Equal(t, "Token (a session token or an API token; not echoed): "+
			"token kept in "+config+" for "+server+": the commands that follow act as "+tokenName+" (an API token, role worker) there\n",
			r.stderr)
		require.Equal(t, token, keptToken(t, config, server))
		who := okJSON(t, ci, "whoami")
		require.Equal(t, "worker", who["role"])

		r = run(t, ci, "logout")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Regexp(t, row("revoked", "false"), r.stdout)
		require.Equal(t, "an API token is not revoked by logout: the administrator revokes it (foundry tokens revoke "+
			who["token_id"].(string)+")\nthe token is removed from "+config+"\n", r.stderr)
		require.Equal(t, map[string]any{}, readConfig(t, config))
		require.Equal(t, "token", okJSON(t, with(env, "FOUNDRY_TOKEN", token), "whoami")["kind"], "still valid")

		// A kept token that stopped working: logout forgets it, with
		// nothing to revoke.
		r = runIn(t, strings.NewReader(token), ci, "login", "--with-token", "-q")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Empty(t, r.stderr, "-q")
		ok(t, admin, "tokens", "revoke", who["token_id"].(string))
		require.Eventually(t, func() bool { return run(t, ci, "whoami").code == cli.ExitFailed }, 5*time.Second, 50*time.Millisecond,
			"the edge's cache forgets it within a second")
		r = run(t, ci, "logout", "--json")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Equal(t, `{"revoked":false}`+"\n", r.stdout)
		require.Equal(t, "the token no longer works (token revoked): nothing to revoke\nthe token is removed from "+config+"\n", r.stderr)
		require.Equal(t, map[string]any{}, readConfig(t, config))
	})

	t.Run("refused: an unknown token, nothing kept", func(t *testing.T) {
		home := t.TempDir()
		r := runIn(t, strings.NewReader("fdt_"+strings.Repeat("0", 64)+"\n"), with(env, "HOME", home), "login", "--with-token")
		require.Equal(t, cli.ExitFailed, r.code)
		require.Equal(t, "foundry: "+server+" refused the token, so it is not kept: invalid token\n", r.stderr)
		_, err := os.Stat(filepath.Join(home, ".config", "foundry", "cli.json"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})

	t.Run("how the token may come", func(t *testing.T) {
		home := t.TempDir()
		nobody := with(env, "HOME", home)
		for _, tc := range []struct {
			stdin *strings.Reader
			args  []string
			want  string
		}{
			{strings.NewReader("t\n"), []string{"login"}, "foundry: standard input is not a terminal to ask for the token on: " +
				"give it there with --with-token (foundry login --with-token < FILE)\n"},
			{strings.NewReader(""), []string{"login", "--with-token"}, "foundry: --with-token: standard input holds no token " +
				"(foundry login --with-token < FILE)\n"},
			{strings.NewReader("t"), []string{"login", "--with-token", "--token", "t"}, "foundry: --token and --with-token each give " +
				"the token: give one (--with-token keeps it out of the shell's history)\n"},
			{strings.NewReader(""), []string{"login", "--token="}, "foundry: --token= gives no token: give it on standard input with " +
				"--with-token, or at the prompt\n"},
			{strings.NewReader("t"), []string{"login", "--with-token", "--config="}, "foundry: there is no config file to keep the token " +
				"in (HOME and XDG_CONFIG_HOME are unset, or --config=): name one with --config\n"},
		} {
			r := runIn(t, tc.stdin, nobody, tc.args...)
			require.Equal(t, cli.ExitUsage, r.code, "%q: %s", tc.args, r.stderr)
			require.Equal(t, tc.want+"Run 'foundry login --help' for usage.\n", r.stderr, tc.args)
		}
		_, err := os.Stat(filepath.Join(home, ".config", "foundry", "cli.json"))
		require.ErrorIs(t, err, os.ErrNotExist)

		// --token works, with a warning even under -q: the secret is in the
		// shell's history now.
		session := okJSON(t, env, "register", "flagged-"+name, "--no-store")["session_token"].(string)
		r := run(t, nobody, "login", "--token", session, "-q")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Equal(t, "warning: a token given as --token stays in the shell's history and shows in the process list: "+
			"prefer foundry login --with-token < FILE, or the prompt\n", r.stderr)
		require.Equal(t, session, keptToken(t, filepath.Join(home, ".config", "foundry", "cli.json"), server))

		// A token in the environment wins over the file: login says so.
		other := t.TempDir()
		r = runIn(t, strings.NewReader(session), with(env, "HOME", other, "FOUNDRY_TOKEN", "fdt_other"), "login", "--with-token")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Regexp(t, regexp.MustCompile(`\(but FOUNDRY_TOKEN is set and wins over the file: unset it to act as flagged-`+name+
			` \(a session\)\)\n$`), r.stderr)
	})
}
