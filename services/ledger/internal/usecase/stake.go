package usecase

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// StakeCmd stakes available CC on an idea.
type StakeCmd struct {
	ContributorID string
	IdeaID        string
	// AmountCC is the request's amount_cc (credit.Amount, credit.MaxCC).
	AmountCC float64
	DryRun   bool
	Actor    string
	// ActorHandle is the caller's handle: a stake moves the caller's own
	// CC (the handler refuses anyone else), so it is the contributor's, and
	// the answer names it without a read the fast path would pay for.
	ActorHandle string
	// Refused is the handler's refusal of the caller or of its
	// Idempotency-Key (never set on a dry run), answered once the fields
	// are valid (validate.go).
	Refused error
}

// validate checks the command's fields at once and returns the amount.
func (cmd StakeCmd) validate() (money.Micros, error) {
	cc, amountErr := credit.Amount("amount_cc", cmd.AmountCC, credit.MaxCC)
	return cc, collect(required("contributor_id", cmd.ContributorID), required("idea_id", cmd.IdeaID), amountErr)
}

// StakeResult is the position after the stake, or its projection.
type StakeResult struct {
	DryRun        bool
	ContributorID string
	IdeaID        string
	AmountCC      money.Micros
	// PositionCC is the contributor's whole stake on the idea afterwards.
	PositionCC money.Micros
	// AvailableAfter is the contributor's available CC afterwards (on a
	// dry run: what it would be; negative when the balance is short).
	AvailableAfter money.Micros
	Projection     credit.Projection
	Stage          string
	CreatedAt      time.Time
	// ContributorHandle is the contributor's handle: the caller's
	// (StakeCmd.ActorHandle), or on a dry run the one read with the
	// balance.
	ContributorHandle string
}

// Stake moves available CC into a position on an idea; with DryRun it
// returns the projection and writes nothing. The idea must exist in the
// portfolio and, while it waits for an operator's review, be the staker's
// own (credit.CheckStakeOn). The command's fields are checked first, then the handler's
// refusal, then what one movement may move (checkMovement).
func (a *App) Stake(ctx context.Context, cmd StakeCmd, idem *idempotency.Request) (StakeResult, error) {
	cc, err := cmd.validate()
	if err != nil {
		return StakeResult{}, err
	}
	if cmd.Refused != nil {
		return StakeResult{}, cmd.Refused
	}
	if err := checkMovement(cc, &cmd.IdeaID); err != nil {
		return StakeResult{}, err
	}
	idea, err := a.idea(ctx, cmd.IdeaID)
	if err != nil {
		return StakeResult{}, err
	}
	if err := credit.CheckStakeOn(idea.ID, idea.Pending, idea.CreatedBy, cmd.ContributorID); err != nil {
		return StakeResult{}, err
	}
	out := StakeResult{DryRun: cmd.DryRun, ContributorID: cmd.ContributorID, IdeaID: idea.ID, AmountCC: cc,
		Projection: credit.Project(idea.Stage, idea.Confidence), Stage: idea.Stage}
	if cmd.DryRun {
		r := a.read()
		c, b, err := a.balances(ctx, r, cmd.ContributorID)
		if err != nil {
			return StakeResult{}, err
		}
		staked, err := a.positionOn(ctx, r, cmd.ContributorID, idea.ID)
		if err != nil {
			return StakeResult{}, err
		}
		out.AvailableAfter, out.PositionCC, out.ContributorHandle = b.Available-cc, staked+cc, c.Handle
		return out, nil
	}
	if cmd.Actor == cmd.ContributorID {
		out.ContributorHandle = cmd.ActorHandle
	}
	// The fast path is one transfer and nothing else: no lookup of the
	// contributor and no cooled lots, whose statements every stake would
	// pay for the rare one that needs them. A stake the available balance
	// does not cover (an unknown contributor has none) is tried again on
	// the full path, which answers 404 for an unknown contributor and
	// releases the contributor's cooled lots first.
	stake := func(full bool) error {
		return a.once(ctx, idem, &out, func(r Repos) error {
			if full {
				if err := a.mustExist(ctx, r, cmd.ContributorID); err != nil {
					return err
				}
				if err := a.releaseDue(ctx, r, cmd.ContributorID, cmd.Actor); err != nil {
					return err
				}
			}
			available, staked := credit.Available(cmd.ContributorID), credit.Staked(cmd.ContributorID, idea.ID)
			_, applied, err := a.move(ctx, r, nil, Rate{}, movement{
				entry:       credit.Transfer(credit.KindStake, available, staked, cc),
				contributor: cmd.ContributorID, idea: idea.ID, amount: cc, actor: cmd.Actor,
			})
			if err != nil {
				return err
			}
			out.AvailableAfter, out.PositionCC = applied.Balances[available.Name()], applied.Balances[staked.Name()]
			out.CreatedAt = a.now()
			return nil
		})
	}
	err = stake(false)
	if errors.Is(err, store.ErrInsufficient) {
		err = stake(true)
	}
	return out, err
}

// checkMovement validates what a client asks to move: at least
// credit.MinMovement CC and, for a stake or an unstake (ideaID not nil), an
// idea id that is not blank. Both are field errors (422): a blank id used
// to reach the journal and fail there as an empty stake (400).
func checkMovement(amount money.Micros, ideaID *string) error {
	var fields []fault.FieldError
	if ideaID != nil && strings.TrimSpace(*ideaID) == "" {
		fields = append(fields, fault.Field("idea_id", "is required"))
	}
	if amount < credit.MinMovement {
		fields = append(fields, fault.Field("amount_cc", "must be at least %s (the least CC one movement may move)", ccText(credit.MinMovement)))
	}
	if len(fields) > 0 {
		return fault.Validation(fields...)
	}
	return nil
}

// ccText prints an amount as its shortest decimal (0.01, not 0.010000).
func ccText(m money.Micros) string { return strconv.FormatFloat(m.Float64(), 'f', -1, 64) }

func (a *App) positionOn(ctx context.Context, r Repos, contributorID, ideaID string) (money.Micros, error) {
	return r.Credit.Balance(ctx, credit.Staked(contributorID, ideaID))
}

// idea looks an idea up in the portfolio.
func (a *App) idea(ctx context.Context, id string) (IdeaInfo, error) {
	if a.cfg.Ideas == nil {
		return IdeaInfo{}, fault.New(fault.Unavailable, "the portfolio is not reachable")
	}
	return a.cfg.Ideas.Idea(ctx, id)
}
