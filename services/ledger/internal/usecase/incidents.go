package usecase

import (
	"context"
	"time"

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
	at, ok, cerrs := cursor.DecodeAt(incidentList, p.Cursor, offset)
	if errs = append(errs, cerrs...); len(errs) > 0 {
		return Listed[store.Incident]{}, fault.Validation(errs...)
	}
	var before *store.IncidentKey
	if ok {
		// A keyset page's offset is its cursor's: counting the incidents
		// before it would cost what an offset read does.
		before, offset = &store.IncidentKey{CreatedAt: at.At, ID: at.ID}, at.Offset
	}
	// One incident past the page says whether another follows.
	items, total, err := a.read().Credit.ListIncidents(ctx, before, limit+1, offset)
	if err != nil {
		return Listed[store.Incident]{}, err
	}
	out := Listed[store.Incident]{Total: total, Limit: limit, Offset: offset}
	out.Items, out.Next = cursor.PageAt(incidentList, items, limit, offset, func(i store.Incident) (time.Time, string) {
		return i.CreatedAt, i.ID
	})
	return out, nil
}
