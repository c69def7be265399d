package requestid_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/requestid"
)

// idRule is the documented rule, written independently of Valid.
var idRule = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// FuzzValid checks Valid accepts exactly the documented ids (1 to 128
// letters, digits and "-_.:"), so nothing that could forge a log line is
// ever kept, and that a fresh id always passes.
func FuzzValid(f *testing.F) {
	for _, s := range []string{"abc-123", "trace:1.2_3", "", "has space", "line\nbreak", "é", "a\x00b", "\xff",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		require.Equal(t, idRule.MatchString(id), requestid.Valid(id), "id %q", id)
		require.True(t, requestid.Valid(requestid.New()))
	})
}
