// Package paging answers a page of a list in the one shape every Foundry
// list has: its items under the list's own name, and a
// foundry.common.v1.Pagination beside them. The rule of a page's bounds
// (the default and largest limit, a non-negative offset) is
// fault.Page's; this package only describes the page a use case read.
package paging

import commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"

// Of describes the page of n items at offset in a list of total items,
// limit being the page's size; next is the cursor of the following page
// ("" when there is none, or when the list pages by offset alone).
func Of(limit, offset, total, n int, next string) *commonv1.Pagination {
	return &commonv1.Pagination{
		Limit: int32(limit), Offset: int32(offset), Total: int64(total),
		HasMore: offset+n < total, NextCursor: next,
	}
}

// ByCursor is Of for a list that pages by cursor, whose use case read one
// item past the page to learn whether another follows and gave next
// exactly then: has_more is next's. A page read by cursor carries the
// offset its first page saw, so items added at the list's head meanwhile
// make offset+n fall short of the total on the last page.
func ByCursor(limit, offset, total, n int, next string) *commonv1.Pagination {
	p := Of(limit, offset, total, n, next)
	p.HasMore = next != ""
	return p
}
