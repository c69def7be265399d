package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Register creates a contributor with a handle and its first session in
// one transaction, so a contributor never exists without the session its
// registration answered with. store.ErrAlreadyExists when the handle is
// taken: the unique index on handle decides races, so of two concurrent
// claims one wins and the other gets the error.
func (a *App) Register(ctx context.Context, c store.Contributor, s store.Session) error {
	return a.tx(ctx, func(r Repos) error { return r.Identity.Register(ctx, c, s) })
}

// SessionByTokenHash finds a session and its contributor (whether it has
// expired is the caller's rule). store.ErrNotFound when no session has that
// hash.
func (a *App) SessionByTokenHash(ctx context.Context, tokenHash string) (store.Session, error) {
	return a.read().Identity.SessionByTokenHash(ctx, tokenHash)
}

// Counts returns row counts by table of the whole ledger schema (identity,
// attribution, the CC journal, the audit chain and incidents), for storage
// reports.
func (a *App) Counts(ctx context.Context) (map[string]int, error) {
	r := a.read()
	out := map[string]int{}
	for _, counts := range []func(context.Context) (map[string]int, error){
		r.Identity.Counts, r.Attribution.Counts, r.Credit.Counts, r.Audit.Counts,
	} {
		n, err := counts(ctx)
		if err != nil {
			return nil, wrap("count rows", err)
		}
		for table, rows := range n {
			out[table] = rows
		}
	}
	return out, nil
}
