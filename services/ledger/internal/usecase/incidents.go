package usecase

import (
	"context"
	"strconv"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/cursor"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// incidentList names the incident list's cursors (platform/cursor).
const incidentList = "incidents"

// Incidents returns a page of incidents, newest first (credit.Page).
func (a *App) Incidents(ctx context.Context, p Page) (Listed[store.Incident], error) {
	limit, offset, err := credit.Page(p.Limit, p.Offset)
	if err != nil {
		return Listed[store.Incident]{}, err
	}
	var before *store.IncidentKey
	if p.Cursor != "" {
		key, err := cursor.Decode(incidentList, p.Cursor, 2)
		var us int64
		if err == nil {
			us, err = strconv.ParseInt(key[0], 10, 64)
		}
		switch {
		case err != nil || key[1] == "":
			return Listed[store.Incident]{}, fault.Validation(fault.Field("cursor", "is not a cursor of this list: pass the next_cursor a page of it gave"))
		case offset != 0:
			return Listed[store.Incident]{}, fault.Validation(fault.Field("offset", "must be 0 with a cursor, which says where the page starts"))
		}
		before = &store.IncidentKey{CreatedAt: database.Time(us), ID: key[1]}
	}
	items, total, through, err := a.read().Credit.ListIncidents(ctx, before, limit, offset)
	if err != nil {
		return Listed[store.Incident]{}, err
	}
	if before != nil {
		offset = through
	}
	out := Listed[store.Incident]{Items: items, Total: total, Limit: limit, Offset: offset}
	if n := len(items); n > 0 && offset+n < total {
		last := items[n-1]
		out.Next = cursor.Encode(incidentList, strconv.FormatInt(database.Micros(last.CreatedAt), 10), last.ID)
	}
	return out, nil
}
