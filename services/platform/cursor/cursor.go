// Package cursor writes and reads the keyset cursors of Foundry's growing
// lists (the audit log, tasks, contributions, incidents): a page read
// "after this cursor" starts right after the last item of the page that
// gave it, by the list's sort key, so items added at the head of the list
// meanwhile do not shift it (an offset would). A cursor is opaque to
// clients: the base64url of the list's name and the sort key of the last
// item, so one list's cursor is refused by another and a hand-made one
// that does not parse is a 422, never a query.
package cursor

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// sep joins a cursor's parts; no list name or key holds it.
const sep = "\x1f"

// Encode is the cursor of list after the item whose sort key is key.
func Encode(list string, key ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(list + sep + strings.Join(key, sep)))
}

// Decode reads a cursor of list with n key parts; a cursor it did not
// write for this list is a validation failure on the cursor field.
func Decode(list, s string, n int) ([]string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	parts := strings.Split(string(raw), sep)
	if err != nil || len(parts) != n+1 || parts[0] != list {
		return nil, fault.Validation(refused)
	}
	return parts[1:], nil
}

// refused is the cursor field's refusal of a cursor its list did not give.
var refused = fault.Field("cursor", "is not a cursor of this list: pass the next_cursor a page of it gave")

// withOffset is the offset field's refusal beside a cursor.
var withOffset = fault.Field("offset", "must be 0 with a cursor, which says where the page starts")

// MaxOffset is the deepest offset a growing list pages to. A database
// reads and drops every row before an offset, so a page at offset 100 000
// of contributions took 3 s at a million rows, where a page by cursor
// reads its own rows from an index whatever its depth. Past it, the lists
// that have cursors say to page by them (docs/api.md, Lists).
const MaxOffset = 10_000

// deepOffset is the offset field's refusal past MaxOffset.
var deepOffset = fault.Field("offset", "must be at most %d: read further pages by cursor (each page's pagination.next_cursor)", MaxOffset)

// At is where a page of a list ordered by creation time, then id (tasks,
// contributions, incidents), starts: after the item created at At with
// ID, which is the list's Offset-th from its head.
type At struct {
	At     time.Time
	ID     string
	Offset int
}

// EncodeAt is the cursor of list after the item created at at with id,
// the page after it starting at offset. The cursor carries the offset so
// that a page read by it says where it is in the list without counting
// the rows before it, which costs as much as an offset read (issue 38):
// it is the item's offset when the first page was read, since items added
// at the list's head meanwhile do not move a cursor.
func EncodeAt(list string, at time.Time, id string, offset int) string {
	return Encode(list, strconv.FormatInt(at.UnixMicro(), 10), id, strconv.Itoa(offset))
}

// DecodeAt reads a page's cursor c of list (EncodeAt's) beside its offset:
// ok is false when there is none; a cursor list did not give, a cursor
// with an offset (a cursor says where the page starts), or an offset past
// MaxOffset comes back as the field's refusal, to join the command's one
// validation.
func DecodeAt(list, c string, offset int) (k At, ok bool, errs []fault.FieldError) {
	if c == "" {
		return At{}, false, checkDepth(offset)
	}
	key, err := Decode(list, c, 3)
	var us int64
	if err == nil {
		us, err = strconv.ParseInt(key[0], 10, 64)
	}
	if err == nil {
		k.Offset, err = strconv.Atoi(key[2])
	}
	switch {
	case err != nil || key[1] == "" || k.Offset < 0:
		return At{}, false, []fault.FieldError{refused}
	case offset != 0:
		return At{}, false, []fault.FieldError{withOffset}
	}
	k.At, k.ID = time.UnixMicro(us).UTC(), key[1]
	return k, true, nil
}

// PageAt cuts items, read with one item past a page of limit, to the page
// starting at offset, and returns the cursor of list after the page's last
// item when another item followed it ("" otherwise). The item read past
// the page, not offset+n < total, says whether items follow: a page read
// by cursor carries the offset its first page saw, and items added at the
// list's head meanwhile grow the total, not what follows the page. key
// gives an item's creation time and id.
func PageAt[T any](list string, items []T, limit, offset int, key func(T) (time.Time, string)) ([]T, string) {
	if limit <= 0 || len(items) <= limit {
		return items[:min(len(items), max(limit, 0))], ""
	}
	items = items[:limit]
	at, id := key(items[limit-1])
	return items, EncodeAt(list, at, id, offset+limit)
}

// EncodeSeq is the cursor of list after the item with sequence number seq
// (the audit log).
func EncodeSeq(list string, seq int64) string { return Encode(list, strconv.FormatInt(seq, 10)) }

// DecodeSeq reads a page's cursor c of list (EncodeSeq's) beside its
// offset, as DecodeAt does: 0 when there is none; a sequence number is 1
// or more.
func DecodeSeq(list, c string, offset int) (int64, []fault.FieldError) {
	if c == "" {
		return 0, checkDepth(offset)
	}
	key, err := Decode(list, c, 1)
	var seq int64
	if err == nil {
		seq, err = strconv.ParseInt(key[0], 10, 64)
	}
	switch {
	case err != nil || seq < 1:
		return 0, []fault.FieldError{refused}
	case offset != 0:
		return 0, []fault.FieldError{withOffset}
	}
	return seq, nil
}

// checkDepth refuses an offset past MaxOffset.
func checkDepth(offset int) []fault.FieldError {
	if offset > MaxOffset {
		return []fault.FieldError{deepOffset}
	}
	return nil
}
