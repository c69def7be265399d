package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/migrate"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Storage describes the portfolio's database for the storage report.
type Storage struct {
	Engine        database.Engine
	Schema        string
	SchemaVersion int
	// Target is the redacted connection target: the caller decides who may
	// see it.
	Target string
	Counts store.Counts
}

// Storage returns the storage report: engine, schema, version and row
// counts.
func (a *App) Storage(ctx context.Context) (Storage, error) {
	counts, err := a.read().Ideas.Counts(ctx)
	if err != nil {
		return Storage{}, err
	}
	version, err := migrate.Version(ctx, a.db)
	if err != nil {
		return Storage{}, err
	}
	return Storage{Engine: a.db.Engine(), Schema: a.db.Schema(), SchemaVersion: version, Target: a.db.Target(), Counts: counts}, nil
}
