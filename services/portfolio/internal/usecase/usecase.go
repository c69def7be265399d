// Package usecase is the portfolio's use-case layer: each exported method is
// one use case, and each one that writes runs in exactly one database
// transaction that it opens itself. Repositories work over a querier (the
// pool or that transaction) and never open transactions of their own, so an
// idea, its tags, its task events and the portfolio totals commit or roll
// back together. Domain rules (idea.Apply, Advance, AdvanceForTask, Merge,
// right-sizing) are plain functions called between a read and a write. The
// gRPC handler and the background snapshot loop both call this layer;
// neither touches a repository directly.
package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/uow"
	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Repos are the portfolio's repositories over one querier.
type Repos struct {
	Ideas     store.Ideas
	Questions store.Questions
	Snapshots store.Snapshots
}

// Opener builds the repositories over a querier.
type Opener func(q database.Querier) Repos

// Config configures the use cases. Zero values take the documented defaults.
type Config struct {
	Clock clock.Clock
	// NewID makes ids of ideas, questions and snapshots (UUIDs by default).
	NewID func() string
	// Limits bound right-sizing's work and report; zero fields keep
	// rightsizing.DefaultLimits.
	Limits rightsizing.Limits
}

// App runs the portfolio's use cases.
type App struct {
	db  *database.DB
	cfg Config
	// unit runs the transactions over fresh repositories.
	unit uow.Unit[Repos]
}

// New returns the use-case layer over db.
func New(db *database.DB, open Opener, cfg Config) *App {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewString
	}
	return &App{db: db, cfg: cfg, unit: uow.New(db, open, cfg.Clock)}
}

// now is the time records carry, to the microsecond the store keeps, so a
// write's answer equals what a later read returns (nanoseconds in the
// answer and microseconds in the read looked like a change that never
// happened).
func (a *App) now() time.Time { return a.unit.Now() }

// tx runs fn in one transaction over fresh repositories. Serialization
// failures and deadlocks are retried by the database layer, so fn must have
// no effect outside the transaction.
func (a *App) tx(ctx context.Context, fn func(r Repos) error) error { return a.unit.Tx(ctx, fn) }

// read gives repositories over the pool: for use cases that only read.
func (a *App) read() Repos { return a.unit.Read() }

// wrap adds the use case's name to an error.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// IdeaError maps the store's errors about an idea to the failures callers
// see: not found, archived (a conflict), already exists. Anything else,
// a fault included, passes through; nil stays nil.
func IdeaError(err error, id string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fault.New(fault.NotFound, "idea %s not found", id)
	case errors.Is(err, store.ErrArchived):
		return fault.New(fault.Conflict, "idea %s is archived (merged into another idea)", id)
	case errors.Is(err, store.ErrAlreadyExists):
		return fault.New(fault.AlreadyExists, "idea %s already exists", id)
	}
	return err
}
