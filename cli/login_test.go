package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadTokenInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"fdt_abc\n":         "fdt_abc",
		"  0123abcd \r\n\n": "0123abcd",
		"tok":               "tok",
	} {
		got, err := readTokenInput(strings.NewReader(in))
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, got, "%q", in)
	}
	for in, want := range map[string]string{
		"":                           "--with-token: standard input holds no token (foundry login --with-token < FILE)",
		" \n\t\n":                    "--with-token: standard input holds no token (foundry login --with-token < FILE)",
		"fdt_abc\nsecond line\n":     "--with-token: standard input holds more than one word; give the token alone",
		"Bearer fdt_abc":             "--with-token: standard input holds more than one word; give the token alone",
		strings.Repeat("x", 4<<10+1): "--with-token: standard input holds more than 4096 bytes, which is no token",
	} {
		_, err := readTokenInput(strings.NewReader(in))
		require.EqualError(t, err, want, "%.20q", in)
		require.Equal(t, ExitUsage, exitCode(err), "nothing is sent")
	}
}

// terminalInput is a standard input that says it is a terminal, as a
// program embedding the client may.
type terminalInput struct{ *strings.Reader }

func (terminalInput) IsTerminal() bool { return true }

func TestPromptToken(t *testing.T) {
	t.Parallel()
	t.Run("a terminal is asked, on stderr", func(t *testing.T) {
		var stderr bytes.Buffer
		e := &env{stdin: terminalInput{strings.NewReader(" fdt_abc \nnext line\n")}, stderr: &stderr, quiet: true}
		got, err := e.promptToken(context.Background())
		require.NoError(t, err)
		require.Equal(t, "fdt_abc", got, "one line, trimmed")
		require.Equal(t, "Token (a session token or an API token; not echoed): ", stderr.String(), "asked even with -q")
	})
	t.Run("a line that is no token", func(t *testing.T) {
		for _, in := range []string{"\n", "two words\n", ""} {
			e := &env{stdin: terminalInput{strings.NewReader(in)}, stderr: &bytes.Buffer{}}
			_, err := e.promptToken(context.Background())
			require.Error(t, err, "%q", in)
			require.Equal(t, ExitUsage, exitCode(err), "%q", in)
		}
	})
	t.Run("no terminal: refused, nothing read", func(t *testing.T) {
		var stderr bytes.Buffer
		in := strings.NewReader("fdt_abc\n")
		e := &env{stdin: in, stderr: &stderr}
		_, err := e.promptToken(context.Background())
		require.EqualError(t, err, "standard input is not a terminal to ask for the token on: give it there with --with-token "+
			"(foundry login --with-token < FILE)")
		require.Empty(t, stderr.String(), "no prompt")
		require.Equal(t, 8, in.Len(), "nothing read")
	})
}
