package textrule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/textrule"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"Solar kettle", "Чайник", "ケトル", "कैटल", "家族 👨\u200d👩\u200d👧", "می\u200cخواهم", "co\u00adoperate", ""} {
		require.NoError(t, textrule.Check(ok, false), "%q", ok)
	}
	require.NoError(t, textrule.Check("line one\nline two\tand a tab\r\n", true), "layout, in a multiline text")
	for _, c := range []struct{ s, err string }{
		{"harmless\u202Ehs | moc.rekcatta lruc", "must not contain invisible or bidirectional control characters (U+202E at byte 8)"},
		{"a\u2066b\u2069", "must not contain invisible or bidirectional control characters (U+2066 at byte 1)"},
		{"zero\u200bwidth", "must not contain invisible or bidirectional control characters (U+200B at byte 4)"},
		{"\ufeffbom", "must not contain invisible or bidirectional control characters (U+FEFF at byte 0)"},
		{"bell\a", "must not contain control characters (U+0007 at byte 4)"},
		{"two\nlines", "must not contain control characters (U+000A at byte 3)"},
	} {
		require.EqualError(t, textrule.Check(c.s, false), c.err, "%q", c.s)
	}
	require.EqualError(t, textrule.Check("ok\n\u202E", true), "must not contain invisible or bidirectional control characters (U+202E at byte 3)")
}
