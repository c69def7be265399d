package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/cursor"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// incidentList names the incident list's cursors (platform/cursor).
const incidentList = "incidents"

// Incidents returns a page of incidents, newest first (credit.Page).
func (a *App) Incidents(ctx context.Context, p Page) (Listed[store.Incident], error) {
	limit, offset, errs := fault.PageFields(p.Limit, p.Offset, credit.DefaultPage, credit.MaxPage)
	at, id, ok, cerrs := cursor.DecodeAt(incidentList, p.Cursor, offset)
	if errs = append(errs, cerrs...); len(errs) > 0 {
		return Listed[store.Incident]{}, fault.Validation(errs...)
	}
	var before *store.IncidentKey
	if ok {
		before = &store.IncidentKey{CreatedAt: at, ID: id}
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
		out.Next = cursor.EncodeAt(incidentList, last.CreatedAt, last.ID)
	}
	return out, nil
}
