package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Investments are a page of a contributor's positions with their summary.
type Investments struct {
	// Contributor is whose they are (its handle names it in the answer).
	Contributor store.Contributor
	// Positions are one page, largest first; Total counts all of them, and
	// Limit and Offset are the page's bounds, the defaults applied.
	Positions            []store.Position
	Total, Limit, Offset int
	// Balances are over every position, whatever the page.
	Balances store.Balances
}

// Investments returns a page of a contributor's positions
// (credit.PositionPage: by default all of them) and its balances.
func (a *App) Investments(ctx context.Context, contributorID string, p Page) (Investments, error) {
	limit, offset, err := credit.PositionPage(p.Limit, p.Offset)
	if err := collect(required("id", contributorID), err); err != nil {
		return Investments{}, err
	}
	r := a.read()
	c, b, err := a.balances(ctx, r, contributorID)
	if err != nil {
		return Investments{}, err
	}
	ps, total, err := r.Credit.Positions(ctx, contributorID, limit, offset)
	if err != nil {
		return Investments{}, err
	}
	return Investments{Contributor: c, Positions: ps, Total: total, Limit: limit, Offset: offset, Balances: b}, nil
}

// Flow is a page of a contributor's CC movements.
type Flow struct {
	// Contributor is whose they are (its handle names it in the answer).
	Contributor store.Contributor
	Listed[store.JournalEntry]
}

// History returns a page of a contributor's CC movements, newest first
// (credit.Page).
func (a *App) History(ctx context.Context, contributorID string, p Page) (Flow, error) {
	limit, offset, err := credit.Page(p.Limit, p.Offset)
	if err := collect(required("id", contributorID), err); err != nil {
		return Flow{}, err
	}
	r := a.read()
	c, err := a.contributor(ctx, r, contributorID)
	if err != nil {
		return Flow{}, err
	}
	page, err := listed(limit, offset, func(l, o int) ([]store.JournalEntry, int, error) {
		return r.Credit.History(ctx, contributorID, l, o)
	})
	return Flow{Contributor: c, Listed: page}, err
}

// Account is a contributor with its balances as the API shows them.
type Account struct {
	// Contributor is whose they are (its handle names it in the answer).
	Contributor store.Contributor
	Balances    store.Balances
}

// Account returns a contributor and its balances (see Balances).
func (a *App) Account(ctx context.Context, contributorID string) (Account, error) {
	if err := required("contributor_id", contributorID); err != nil {
		return Account{}, err
	}
	c, b, err := a.balances(ctx, a.read(), contributorID)
	return Account{Contributor: c, Balances: b}, err
}

// Balances are a contributor's CC as the API shows them: cooling lots
// whose cooldown has passed count as available even before a movement
// releases them into the available account.
func (a *App) Balances(ctx context.Context, contributorID string) (store.Balances, error) {
	acc, err := a.Account(ctx, contributorID)
	return acc.Balances, err
}

// balances reads a contributor (NotFound when there is none) and its
// balances as the API shows them.
func (a *App) balances(ctx context.Context, r Repos, contributorID string) (store.Contributor, store.Balances, error) {
	c, err := a.contributor(ctx, r, contributorID)
	if err != nil {
		return store.Contributor{}, store.Balances{}, err
	}
	b, err := r.Credit.Balances(ctx, contributorID)
	if err != nil {
		return store.Contributor{}, store.Balances{}, err
	}
	due, err := r.Credit.DueCooling(ctx, contributorID, a.now())
	if err != nil {
		return store.Contributor{}, store.Balances{}, err
	}
	var dueTotal money.Micros
	for _, l := range due {
		dueTotal += l.Amount
	}
	return c, shown(b, dueTotal), nil
}

// shown is b as the API shows it: due, the cooling CC whose cooldown has
// passed, counts as available though no movement released it yet.
func shown(b store.Balances, due money.Micros) store.Balances {
	b.Cooling -= due
	b.Available += due
	return b
}

// Preview is an idea's ROI projection.
type Preview struct {
	Idea       IdeaInfo
	StakedCC   money.Micros
	Stakers    int
	Projection credit.Projection
	Coherence  float64
	// PaidCC is what the idea's revenue records paid its stakers so far;
	// FromImpact is true when the projection rests on it (impact.Project)
	// rather than on the stage's heuristic alone.
	PaidCC     money.Micros
	FromImpact bool
}

// InvestPreview projects what staking on an idea may return: from the
// stage's heuristic, grounded in what the idea's revenue has paid its
// stakers once it has paid any.
func (a *App) InvestPreview(ctx context.Context, ideaID string) (Preview, error) {
	if err := required("idea_id", ideaID); err != nil {
		return Preview{}, err
	}
	idea, err := a.idea(ctx, ideaID)
	if err != nil {
		return Preview{}, err
	}
	r := a.read()
	staked, n, err := r.Credit.IdeaStaked(ctx, idea.ID)
	if err != nil {
		return Preview{}, err
	}
	totals, err := r.Impact.ImpactTotals(ctx, idea.ID)
	if err != nil {
		return Preview{}, err
	}
	p, fromImpact := impact.Project(credit.Project(idea.Stage, idea.Confidence), totals.PaidCC, staked)
	return Preview{Idea: idea, StakedCC: staked, Stakers: n, Projection: p, Coherence: idea.Confidence, PaidCC: totals.PaidCC,
		FromImpact: fromImpact}, nil
}
