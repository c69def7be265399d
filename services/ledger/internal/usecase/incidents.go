package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Incidents returns a page of incidents, newest first (credit.Page).
func (a *App) Incidents(ctx context.Context, p Page) ([]store.Incident, error) {
	limit, offset, err := credit.Page(p.Limit, p.Offset)
	if err != nil {
		return nil, err
	}
	return a.read().Credit.ListIncidents(ctx, limit, offset)
}
