package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Incidents returns a page of incidents, newest first (credit.Page).
func (a *App) Incidents(ctx context.Context, p Page) (Listed[store.Incident], error) {
	limit, offset, err := credit.Page(p.Limit, p.Offset)
	if err != nil {
		return Listed[store.Incident]{}, err
	}
	return listed(limit, offset, func(l, o int) ([]store.Incident, int, error) {
		return a.read().Credit.ListIncidents(ctx, l, o)
	})
}
