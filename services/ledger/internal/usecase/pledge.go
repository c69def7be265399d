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
	// ContributorID is the request's id: the contributor who pledges.
	ContributorID string
	IdeaID        string
	// HoursPledged is the request's hours_pledged (credit.Amount,
	// credit.MaxHours).
	HoursPledged float64
	// Refused is the handler's refusal of the caller or of its
	// Idempotency-Key, answered once the fields are valid (validate.go).
	Refused error
}

// validate checks the command's fields at once and returns the hours in
// micro-hours.
func (cmd PledgeCmd) validate() (money.Micros, error) {
	hours, hoursErr := credit.Amount("hours_pledged", cmd.HoursPledged, credit.MaxHours)
	return hours, collect(required("id", cmd.ContributorID), required("idea_id", cmd.IdeaID), hoursErr)
}

// Pledge records a time pledge valued at the pledge rate. A pledge moves no
// CC: cc_equivalent says what the time is worth. The command's fields are
// checked first, then the handler's refusal, then the idea.
func (a *App) Pledge(ctx context.Context, cmd PledgeCmd, idem *idempotency.Request) (store.Pledge, error) {
	hours, err := cmd.validate()
	if err != nil {
		return store.Pledge{}, err
	}
	if cmd.Refused != nil {
		return store.Pledge{}, cmd.Refused
	}
	idea, err := a.idea(ctx, cmd.IdeaID)
	if err != nil {
		return store.Pledge{}, err
	}
	value, err := credit.PledgeValue(hours, a.cfg.PledgeRate)
	if err != nil {
		return store.Pledge{}, fault.Validation(fault.Field("hours_pledged", "is too large"))
	}
	var out store.Pledge
	err = a.once(ctx, idem, &out, func(r Repos) error {
		c, err := a.contributor(ctx, r, cmd.ContributorID)
		if err != nil {
			return err
		}
		out = store.Pledge{ID: a.cfg.NewID(), ContributorID: cmd.ContributorID, IdeaID: idea.ID, MicroHours: hours,
			CCEquivalent: value, CreatedAt: a.now(), ContributorHandle: c.Handle}
		return r.Credit.InsertPledge(ctx, out)
	})
	return out, err
}
