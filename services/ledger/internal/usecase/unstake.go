package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// UnstakeCmd takes CC out of a position.
type UnstakeCmd struct {
	ContributorID string
	IdeaID        string
	// AmountCC is the request's amount_cc (credit.Amount, credit.MaxCC).
	AmountCC float64
	Actor    string
	// ActorHandle is the caller's handle, the contributor's (see
	// StakeCmd.ActorHandle): an unstake with a position reads no
	// contributor.
	ActorHandle string
	// Refused is the handler's refusal of the caller or of its
	// Idempotency-Key, answered once the fields are valid (validate.go).
	Refused error
}

// validate checks the command's fields at once and returns the amount.
func (cmd UnstakeCmd) validate() (money.Micros, error) {
	cc, amountErr := credit.Amount("amount_cc", cmd.AmountCC, credit.MaxCC)
	return cc, collect(required("contributor_id", cmd.ContributorID), required("idea_id", cmd.IdeaID), amountErr)
}

// UnstakeResult says when the CC is available again.
type UnstakeResult struct {
	ContributorID string
	IdeaID        string
	AmountCC      money.Micros
	Cooldown      time.Duration
	AvailableAt   time.Time
	// Status is "released" (available at once) or "cooling".
	Status string
	// ContributorHandle is the contributor's handle: the caller's
	// (UnstakeCmd.ActorHandle).
	ContributorHandle string
}

// Unstake moves CC out of a position: straight to available below the
// instant threshold, otherwise into cooling until the cooldown passes. The
// tier counts what the contributor unstaked from the idea over the last
// credit.UnstakeWindow too, read after the position's account is locked,
// so concurrent unstakes from one position each see the others. Unstaking
// is allowed at any time (the idea need not exist any more). The command's
// fields are checked first, then the handler's refusal, then what one
// movement may move (checkMovement).
func (a *App) Unstake(ctx context.Context, cmd UnstakeCmd, idem *idempotency.Request) (UnstakeResult, error) {
	cc, err := cmd.validate()
	if err != nil {
		return UnstakeResult{}, err
	}
	if cmd.Refused != nil {
		return UnstakeResult{}, cmd.Refused
	}
	if err := checkMovement(cc, &cmd.IdeaID); err != nil {
		return UnstakeResult{}, err
	}
	var out UnstakeResult
	err = a.once(ctx, idem, &out, func(r Repos) error {
		staked := credit.Staked(cmd.ContributorID, cmd.IdeaID)
		found, err := r.Credit.LockAccount(ctx, staked)
		if err != nil {
			return err
		}
		if !found {
			// No position: say whether the contributor exists at all.
			if err := a.mustExist(ctx, r, cmd.ContributorID); err != nil {
				return err
			}
		}
		now := a.now()
		earlier, err := r.Credit.UnstakedSince(ctx, cmd.ContributorID, cmd.IdeaID, now.Add(-credit.UnstakeWindow))
		if err != nil {
			return err
		}
		cooldown := credit.UnstakeCooldown(earlier, cc)
		to, status := credit.Available(cmd.ContributorID), "released"
		if cooldown > 0 {
			to, status = credit.Cooling(cmd.ContributorID), "cooling"
		}
		id, _, err := a.move(ctx, r, nil, Rate{}, movement{
			entry:       credit.Transfer(credit.KindUnstake, staked, to, cc),
			contributor: cmd.ContributorID, idea: cmd.IdeaID, amount: cc, actor: cmd.Actor,
			attrs: map[string]string{"cooldown": cooldown.String()},
		})
		if err != nil {
			return err
		}
		if cooldown > 0 {
			if err := r.Credit.InsertCooling(ctx, store.CoolingLot{ID: a.cfg.NewID(), ContributorID: cmd.ContributorID,
				IdeaID: cmd.IdeaID, Amount: cc, AvailableAt: now.Add(cooldown), EntryID: id, CreatedAt: now}); err != nil {
				return err
			}
		}
		out = UnstakeResult{ContributorID: cmd.ContributorID, IdeaID: cmd.IdeaID, AmountCC: cc,
			Cooldown: cooldown, AvailableAt: now.Add(cooldown), Status: status}
		if cmd.Actor == cmd.ContributorID {
			out.ContributorHandle = cmd.ActorHandle
		}
		return nil
	})
	return out, err
}
