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
	"strings"

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
		return nil, fault.Validation(fault.Field("cursor", "is not a cursor of this list: pass the next_cursor a page of it gave"))
	}
	return parts[1:], nil
}
