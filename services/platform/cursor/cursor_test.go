package cursor

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	c := Encode("tasks", "1764060000000000", "0192f0c1-aaaa")
	require.NotContains(t, c, "tasks", "opaque")
	key, err := Decode("tasks", c, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"1764060000000000", "0192f0c1-aaaa"}, key)
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]string{
		"another list's": Encode("audit", "7"),
		"too few parts":  Encode("tasks", "1"),
		"not base64":     "%%%",
		"empty":          "",
	} {
		_, err := Decode("tasks", c, 2)
		fe, ok := fault.As(err)
		require.True(t, ok, name)
		require.Equal(t, fault.Invalid, fe.Kind, name)
		require.Equal(t, "cursor", fe.Fields[0].Field, name)
	}
}

func TestAtAndSeq(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 30, 0, 123456000, time.UTC)
	got, ok, errs := DecodeAt("tasks", EncodeAt("tasks", at, "t-1", 150), 0)
	require.True(t, ok)
	require.Empty(t, errs)
	require.Equal(t, At{At: at, ID: "t-1", Offset: 150}, got, "the page's offset rides in the cursor")
	_, ok, errs = DecodeAt("tasks", "", 3)
	require.False(t, ok, "no cursor: an offset page")
	require.Empty(t, errs)
	for name, tc := range map[string]struct {
		c      string
		offset int
		field  string
	}{
		"another list's":  {EncodeAt("incidents", at, "x", 1), 0, "cursor"},
		"a bad time":      {Encode("tasks", "soon", "x", "1"), 0, "cursor"},
		"no id":           {Encode("tasks", "1", "", "1"), 0, "cursor"},
		"a bad offset":    {Encode("tasks", "1", "x", "many"), 0, "cursor"},
		"a negative one":  {Encode("tasks", "1", "x", "-1"), 0, "cursor"},
		"an older cursor": {Encode("tasks", "1", "x"), 0, "cursor"},
		"with an offset":  {EncodeAt("tasks", at, "x", 1), 2, "offset"},
		"bad, and offset": {"%%", 2, "cursor"},
	} {
		_, ok, errs := DecodeAt("tasks", tc.c, tc.offset)
		require.False(t, ok, name)
		require.Len(t, errs, 1, name)
		require.Equal(t, tc.field, errs[0].Field, name)
	}

	seq, errs := DecodeSeq("audit", EncodeSeq("audit", 7), 0)
	require.Empty(t, errs)
	require.Equal(t, int64(7), seq)
	for name, tc := range map[string]struct {
		c      string
		offset int
		field  string
	}{
		"zero":           {EncodeSeq("audit", 0), 0, "cursor"},
		"another list's": {EncodeSeq("tasks", 3), 0, "cursor"},
		"with an offset": {EncodeSeq("audit", 3), 1, "offset"},
	} {
		_, errs := DecodeSeq("audit", tc.c, tc.offset)
		require.Len(t, errs, 1, name)
		require.Equal(t, tc.field, errs[0].Field, name)
	}
}

// TestOffsetsStopAtMaxOffset: a growing list pages by offset down to
// MaxOffset and says to page by cursor past it.
func TestOffsetsStopAtMaxOffset(t *testing.T) {
	t.Parallel()
	_, ok, errs := DecodeAt("tasks", "", MaxOffset)
	require.False(t, ok)
	require.Empty(t, errs, "the deepest offset is served")
	_, _, errs = DecodeAt("tasks", "", MaxOffset+1)
	require.Equal(t, []fault.FieldError{{Field: "offset",
		Message: "must be at most 10000: read further pages by cursor (each page's pagination.next_cursor)"}}, errs)
	_, errs = DecodeSeq("audit", "", MaxOffset)
	require.Empty(t, errs)
	_, errs = DecodeSeq("audit", "", MaxOffset+1)
	require.Len(t, errs, 1)
	require.Equal(t, "offset", errs[0].Field)
	require.Contains(t, errs[0].Message, "by cursor")
}

// TestPageAt: a page read with one item past its limit is cut to the
// limit and gives the cursor after its last item, at the next page's
// offset; a page with nothing past it gives none, whatever it holds.
func TestPageAt(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	key := func(i int) (time.Time, string) { return at.Add(time.Duration(i) * time.Second), fmt.Sprint("id-", i) }
	page, next := PageAt("tasks", []int{1, 2, 3}, 2, 40, key)
	require.Equal(t, []int{1, 2}, page)
	got, ok, errs := DecodeAt("tasks", next, 0)
	require.True(t, ok)
	require.Empty(t, errs)
	require.Equal(t, At{At: at.Add(2 * time.Second), ID: "id-2", Offset: 42}, got)
	page, next = PageAt("tasks", []int{1, 2}, 2, 40, key)
	require.Equal(t, []int{1, 2}, page)
	require.Empty(t, next, "a full page, nothing past it")
	page, next = PageAt("tasks", []int{}, 2, 0, key)
	require.Empty(t, page)
	require.Empty(t, next)
}
