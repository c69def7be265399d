package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// PledgeCmd pledges time to an idea.
type PledgeCmd struct {
	ContributorID string
	IdeaID        string
	MicroHours    money.Micros
}

// Pledge records a time pledge valued at the pledge rate. A pledge moves no
// CC: cc_equivalent says what the time is worth.
func (a *App) Pledge(ctx context.Context, cmd PledgeCmd, idem *idempotency.Request) (store.Pledge, error) {
	idea, err := a.idea(ctx, cmd.IdeaID)
	if err != nil {
		return store.Pledge{}, err
	}
	value, err := credit.PledgeValue(cmd.MicroHours, a.cfg.PledgeRate)
	if err != nil {
		return store.Pledge{}, fault.Validation(fault.Field("hours_pledged", "is too large"))
	}
	var out store.Pledge
	err = a.once(ctx, idem, &out, func(r Repos) error {
		if err := a.mustExist(ctx, r, cmd.ContributorID); err != nil {
			return err
		}
		out = store.Pledge{ID: a.cfg.NewID(), ContributorID: cmd.ContributorID, IdeaID: idea.ID, MicroHours: cmd.MicroHours,
			CCEquivalent: value, CreatedAt: a.now()}
		return r.Credit.InsertPledge(ctx, out)
	})
	return out, err
}
