package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/cursor"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// contributionList names the contribution list's cursors (platform/cursor).
const contributionList = "contributions"

// ListContributionsCmd asks for a page of contributions, by asset and by
// contributor when they are set.
type ListContributionsCmd struct {
	AssetID, ContributorID string
	Page                   Page
}

// ListContributions returns a page of contributions, oldest first
// (attribution.ContributionPage), how many the filters match and the
// cursor of the next page. A page read by cursor (with no offset) starts
// after the contribution the cursor names; an unknown asset or contributor
// is an empty list, as any filter that matches nothing.
func (a *App) ListContributions(ctx context.Context, q ListContributionsCmd) (Listed[store.Contribution], error) {
	limit, offset, errs := fault.PageFields(q.Page.Limit, q.Page.Offset, attribution.MaxContributionPage, attribution.MaxContributionPage)
	// One contribution past the page says whether another follows.
	f := store.ContributionFilter{AssetID: q.AssetID, ContributorID: q.ContributorID, Limit: limit + 1, Offset: offset}
	after, ok, cerrs := cursor.DecodeAt(contributionList, q.Page.Cursor, offset)
	errs = append(errs, cerrs...)
	if ok {
		// A keyset page's offset is its cursor's: counting the
		// contributions before it would cost what an offset read does.
		f.After, offset = &store.ContributionKey{CreatedAt: after.At, ID: after.ID}, after.Offset
	}
	if len(errs) > 0 {
		return Listed[store.Contribution]{}, fault.Validation(errs...)
	}
	items, total, err := a.read().Attribution.ListContributions(ctx, f)
	if err != nil {
		return Listed[store.Contribution]{}, err
	}
	out := Listed[store.Contribution]{Total: total, Limit: limit, Offset: offset}
	out.Items, out.Next = cursor.PageAt(contributionList, items, limit, offset, func(c store.Contribution) (time.Time, string) {
		return c.CreatedAt, c.ID
	})
	return out, nil
}

// ListContributors returns a page of contributors, oldest first
// (attribution.PageLimit), each with its balances as the API shows them
// (see Balances): the one with handle
// when it is set (an empty list when none has it), and how many match.
func (a *App) ListContributors(ctx context.Context, handle string, p Page) (Listed[store.ContributorAccount], error) {
	limit, offset, err := attribution.PageLimit(p.Limit, p.Offset)
	if err != nil {
		return Listed[store.ContributorAccount]{}, err
	}
	now := a.now()
	page, err := listed(limit, offset, func(l, o int) ([]store.ContributorAccount, int, error) {
		return a.read().Identity.ListContributors(ctx, store.ContributorFilter{Handle: handle, Limit: l, Offset: o, DueBy: now})
	})
	// Fold the due cooling CC into the balances, as GET balances shows
	// them; what is due is then counted in Available, so DueCooling is 0.
	for i, c := range page.Items {
		page.Items[i].Balances, page.Items[i].DueCooling = shown(c.Balances, c.DueCooling), 0
	}
	return page, err
}
