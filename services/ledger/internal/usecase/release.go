package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
)

// releaseDue moves a contributor's cooled lots back to available, inside
// the transaction of the movement that is about to use them.
func (a *App) releaseDue(ctx context.Context, r Repos, contributorID, actor string) error {
	due, err := r.Credit.DueCooling(ctx, contributorID, a.now())
	if err != nil {
		return err
	}
	for _, l := range due {
		id, _, err := a.move(ctx, r, nil, Rate{}, movement{
			entry:       credit.Transfer(credit.KindRelease, credit.Cooling(contributorID), credit.Available(contributorID), l.Amount),
			contributor: contributorID, idea: l.IdeaID, amount: l.Amount, actor: actor,
			attrs: map[string]string{"cooling_id": l.ID},
		})
		if err != nil {
			return err
		}
		if err := r.Credit.ReleaseCooling(ctx, l.ID, id); err != nil {
			return err
		}
	}
	return nil
}
