package paging

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
)

func TestOf(t *testing.T) {
	t.Parallel()
	require.True(t, proto.Equal(&commonv1.Pagination{Limit: 2, Offset: 0, Total: 5, HasMore: true, NextCursor: "c"}, Of(2, 0, 5, 2, "c")))
	require.True(t, proto.Equal(&commonv1.Pagination{Limit: 2, Offset: 4, Total: 5, HasMore: false}, Of(2, 4, 5, 1, "")), "the last page")
	require.True(t, proto.Equal(&commonv1.Pagination{Limit: 50, Offset: 0, Total: 0}, Of(50, 0, 0, 0, "")), "an empty list")
	require.True(t, proto.Equal(&commonv1.Pagination{Limit: 10, Offset: 20, Total: 5}, Of(10, 20, 5, 0, "")), "past the end")
}

// TestByCursor: a list that pages by cursor says has_more exactly when a
// cursor follows, though the head grew past offset+n.
func TestByCursor(t *testing.T) {
	t.Parallel()
	require.True(t, proto.Equal(&commonv1.Pagination{Limit: 2, Offset: 2, Total: 6, HasMore: true, NextCursor: "c"}, ByCursor(2, 2, 6, 2, "c")))
	require.True(t, proto.Equal(&commonv1.Pagination{Limit: 2, Offset: 4, Total: 6}, ByCursor(2, 4, 6, 1, "")),
		"the last page, though two arrived at the head")
}
