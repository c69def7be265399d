package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Incidents returns a page of incidents, newest first.
func (a *App) Incidents(ctx context.Context, limit, offset int) ([]store.Incident, error) {
	return a.read().Credit.ListIncidents(ctx, limit, offset)
}
