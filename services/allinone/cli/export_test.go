package cli

import (
	"io"
	"testing"
)

// ForceTerminal makes the client treat every stderr as a terminal until
// the test ends, so its progress output can be checked. Only a test that
// is not parallel may call it: the setting is the package's.
func ForceTerminal(t *testing.T) {
	t.Helper()
	prev := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { isTerminal = prev })
}
