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

// DepositCmd confirms a USD deposit received for a contributor.
type DepositCmd struct {
	ContributorID string
	AmountUSD     money.Micros
	// Reference (the payment's reference) makes the deposit idempotent.
	Reference string
	Actor     string
}

// DepositResult is the CC minted.
type DepositResult struct {
	ContributorID string
	AmountUSD     money.Micros
	MintedCC      money.Micros
	FeeUSD        money.Micros
	Reference     string
	BuyRate       money.Micros
	// Duplicate is true when the reference was recorded before: nothing
	// was minted again.
	Duplicate bool
	CreatedAt time.Time
}

// Deposit mints CC at the buy rate for a confirmed deposit and grows the
// treasury by its USD. A known reference with the same contributor and
// amount answers the original deposit; with other values it is a conflict.
func (a *App) Deposit(ctx context.Context, cmd DepositCmd, idem *idempotency.Request) (DepositResult, error) {
	var out DepositResult
	err := a.once(ctx, idem, &out, func(r Repos) error {
		eco, rate, err := a.begin(ctx, r, cmd.ContributorID, cmd.Actor, false)
		if err != nil {
			return err
		}
		if prev, err := r.Credit.DepositByReference(ctx, cmd.Reference); err == nil {
			if prev.ContributorID != cmd.ContributorID || prev.AmountUSD != cmd.AmountUSD {
				return fault.New(fault.Conflict, "reference %q was used for another deposit", cmd.Reference)
			}
			out = DepositResult{ContributorID: prev.ContributorID, AmountUSD: prev.AmountUSD, MintedCC: prev.MintedCC,
				FeeUSD: prev.FeeUSD, BuyRate: prev.BuyRate, Reference: prev.Reference, Duplicate: true, CreatedAt: prev.CreatedAt}
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		minted, fee, err := rate.Quote.Mint(cmd.AmountUSD)
		if err != nil {
			return fault.Validation(fault.Field("amount_usd", "is too large to mint at %s CC per USD", rate.Quote.Buy))
		}
		if minted < credit.MinMovement {
			return fault.Validation(fault.Field("amount_usd", "is too small: a deposit must mint at least %s CC, and %s USD mints %s CC at %s CC per USD",
				ccText(credit.MinMovement), ccText(cmd.AmountUSD), ccText(minted), ccText(rate.Quote.Buy)))
		}
		id, _, err := a.move(ctx, r, &eco, rate, movement{
			entry:       credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available(cmd.ContributorID), minted),
			contributor: cmd.ContributorID, amount: minted, mint: minted, treasury: cmd.AmountUSD, feeUSD: fee,
			actor: cmd.Actor,
			attrs: map[string]string{"reference": cmd.Reference, "amount_usd": cmd.AmountUSD.String(),
				"buy_rate": rate.Quote.Buy.String()},
		})
		if err != nil {
			return err
		}
		now := a.now()
		if err := r.Credit.InsertDeposit(ctx, store.Deposit{Reference: cmd.Reference, EntryID: id, ContributorID: cmd.ContributorID,
			AmountUSD: cmd.AmountUSD, MintedCC: minted, BuyRate: rate.Quote.Buy, FeeUSD: fee, CreatedAt: now}); err != nil {
			return err
		}
		out = DepositResult{ContributorID: cmd.ContributorID, AmountUSD: cmd.AmountUSD, MintedCC: minted, FeeUSD: fee,
			Reference: cmd.Reference, BuyRate: rate.Quote.Buy, CreatedAt: now}
		return nil
	})
	return out, err
}

// WithdrawCmd burns a contributor's available CC for USD.
type WithdrawCmd struct {
	ContributorID string
	AmountCC      money.Micros
	Actor         string
}

// WithdrawResult is the USD paid out and the spread kept.
type WithdrawResult struct {
	ContributorID string
	AmountCC      money.Micros
	AmountUSD     money.Micros
	FeeUSD        money.Micros
	SellRate      money.Micros
	CreatedAt     time.Time
}

// Withdraw burns CC at the sell rate and pays the USD out of the treasury.
func (a *App) Withdraw(ctx context.Context, cmd WithdrawCmd, idem *idempotency.Request) (WithdrawResult, error) {
	if err := checkMovement(cmd.AmountCC, nil); err != nil {
		return WithdrawResult{}, err
	}
	var out WithdrawResult
	err := a.once(ctx, idem, &out, func(r Repos) error {
		eco, rate, err := a.begin(ctx, r, cmd.ContributorID, cmd.Actor, true)
		if err != nil {
			return err
		}
		usd, fee, err := rate.Quote.Burn(cmd.AmountCC)
		if err != nil || usd <= 0 {
			return fault.Validation(fault.Field("amount_cc", "is too small or too large to pay out at %s CC per USD", rate.Quote.Sell))
		}
		if _, _, err := a.move(ctx, r, &eco, rate, movement{
			entry:       credit.Transfer(credit.KindWithdraw, credit.Available(cmd.ContributorID), credit.Issuance, cmd.AmountCC),
			contributor: cmd.ContributorID, amount: cmd.AmountCC, burn: cmd.AmountCC, treasury: -usd, feeUSD: fee,
			actor: cmd.Actor,
			attrs: map[string]string{"amount_usd": usd.String(), "sell_rate": rate.Quote.Sell.String()},
		}); err != nil {
			return err
		}
		out = WithdrawResult{ContributorID: cmd.ContributorID, AmountCC: cmd.AmountCC, AmountUSD: usd, FeeUSD: fee,
			SellRate: rate.Quote.Sell, CreatedAt: a.now()}
		return nil
	})
	return out, err
}

// StakeCmd stakes available CC on an idea.
type StakeCmd struct {
	ContributorID string
	IdeaID        string
	AmountCC      money.Micros
	DryRun        bool
	Actor         string
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
}

// Stake moves available CC into a position on an idea; with DryRun it
// returns the projection and writes nothing. The idea must exist in the
// portfolio.
func (a *App) Stake(ctx context.Context, cmd StakeCmd, idem *idempotency.Request) (StakeResult, error) {
	if err := checkMovement(cmd.AmountCC, &cmd.IdeaID); err != nil {
		return StakeResult{}, err
	}
	idea, err := a.idea(ctx, cmd.IdeaID)
	if err != nil {
		return StakeResult{}, err
	}
	out := StakeResult{DryRun: cmd.DryRun, ContributorID: cmd.ContributorID, IdeaID: idea.ID, AmountCC: cmd.AmountCC,
		Projection: credit.Project(idea.Stage, idea.Confidence), Stage: idea.Stage}
	if cmd.DryRun {
		r := a.read()
		if err := a.mustExist(ctx, r, cmd.ContributorID); err != nil {
			return StakeResult{}, err
		}
		b, err := a.Balances(ctx, cmd.ContributorID)
		if err != nil {
			return StakeResult{}, err
		}
		staked, err := a.positionOn(ctx, r, cmd.ContributorID, idea.ID)
		if err != nil {
			return StakeResult{}, err
		}
		out.AvailableAfter, out.PositionCC = b.Available-cmd.AmountCC, staked+cmd.AmountCC
		return out, nil
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
				entry:       credit.Transfer(credit.KindStake, available, staked, cmd.AmountCC),
				contributor: cmd.ContributorID, idea: idea.ID, amount: cmd.AmountCC, actor: cmd.Actor,
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

// UnstakeCmd takes CC out of a position.
type UnstakeCmd struct {
	ContributorID string
	IdeaID        string
	AmountCC      money.Micros
	Actor         string
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
}

// Unstake moves CC out of a position: straight to available below the
// instant threshold, otherwise into cooling until the cooldown passes. The
// tier counts what the contributor unstaked from the idea over the last
// credit.UnstakeWindow too, read after the position's account is locked,
// so concurrent unstakes from one position each see the others. Unstaking
// is allowed at any time (the idea need not exist any more).
func (a *App) Unstake(ctx context.Context, cmd UnstakeCmd, idem *idempotency.Request) (UnstakeResult, error) {
	if err := checkMovement(cmd.AmountCC, &cmd.IdeaID); err != nil {
		return UnstakeResult{}, err
	}
	var out UnstakeResult
	err := a.once(ctx, idem, &out, func(r Repos) error {
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
		cooldown := credit.UnstakeCooldown(earlier, cmd.AmountCC)
		to, status := credit.Available(cmd.ContributorID), "released"
		if cooldown > 0 {
			to, status = credit.Cooling(cmd.ContributorID), "cooling"
		}
		id, _, err := a.move(ctx, r, nil, Rate{}, movement{
			entry:       credit.Transfer(credit.KindUnstake, staked, to, cmd.AmountCC),
			contributor: cmd.ContributorID, idea: cmd.IdeaID, amount: cmd.AmountCC, actor: cmd.Actor,
			attrs: map[string]string{"cooldown": cooldown.String()},
		})
		if err != nil {
			return err
		}
		if cooldown > 0 {
			if err := r.Credit.InsertCooling(ctx, store.CoolingLot{ID: a.cfg.NewID(), ContributorID: cmd.ContributorID,
				IdeaID: cmd.IdeaID, Amount: cmd.AmountCC, AvailableAt: now.Add(cooldown), EntryID: id, CreatedAt: now}); err != nil {
				return err
			}
		}
		out = UnstakeResult{ContributorID: cmd.ContributorID, IdeaID: cmd.IdeaID, AmountCC: cmd.AmountCC,
			Cooldown: cooldown, AvailableAt: now.Add(cooldown), Status: status}
		return nil
	})
	return out, err
}

// Investments are a contributor's positions with their summary.
type Investments struct {
	Positions []store.Position
	Balances  store.Balances
}

// Investments returns a contributor's positions and balances.
func (a *App) Investments(ctx context.Context, contributorID string) (Investments, error) {
	b, err := a.Balances(ctx, contributorID)
	if err != nil {
		return Investments{}, err
	}
	ps, err := a.read().Credit.Positions(ctx, contributorID)
	if err != nil {
		return Investments{}, err
	}
	return Investments{Positions: ps, Balances: b}, nil
}

// History returns a page of a contributor's CC movements, newest first.
func (a *App) History(ctx context.Context, contributorID string, limit, offset int) ([]store.JournalEntry, error) {
	r := a.read()
	if err := a.mustExist(ctx, r, contributorID); err != nil {
		return nil, err
	}
	return r.Credit.History(ctx, contributorID, limit, offset)
}

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

// Preview is an idea's ROI projection.
type Preview struct {
	Idea       IdeaInfo
	StakedCC   money.Micros
	Stakers    int
	Projection credit.Projection
	Coherence  float64
}

// InvestPreview projects what staking on an idea may return.
func (a *App) InvestPreview(ctx context.Context, ideaID string) (Preview, error) {
	idea, err := a.idea(ctx, ideaID)
	if err != nil {
		return Preview{}, err
	}
	staked, n, err := a.read().Credit.IdeaStaked(ctx, idea.ID)
	if err != nil {
		return Preview{}, err
	}
	return Preview{Idea: idea, StakedCC: staked, Stakers: n, Projection: credit.Project(idea.Stage, idea.Confidence),
		Coherence: idea.Confidence}, nil
}

// begin starts a movement that mints or burns CC for a contributor,
// inside the use case's transaction: the contributor must exist, the mode
// lock is taken shared and the economy row locked (so such movements are
// serialised with each other and with the oracle's readings, and the
// backing check is exact), and the rate in force is read; with release,
// the contributor's cooled lots move back to available first, so the
// movement can use them.
func (a *App) begin(ctx context.Context, r Repos, contributorID, actor string, release bool) (store.Economy, Rate, error) {
	if err := a.mustExist(ctx, r, contributorID); err != nil {
		return store.Economy{}, Rate{}, err
	}
	eco, rate, err := a.lockSupply(ctx, r)
	if err != nil {
		return store.Economy{}, Rate{}, err
	}
	if release {
		if err := a.releaseDue(ctx, r, contributorID, actor); err != nil {
			return store.Economy{}, Rate{}, err
		}
	}
	return eco, rate, nil
}

// lockSupply takes the mode lock shared, then the economy row, and reads
// the rate in force under it: what every movement of supply starts with.
func (a *App) lockSupply(ctx context.Context, r Repos) (store.Economy, Rate, error) {
	if err := r.Credit.LockModes(ctx, false); err != nil {
		return store.Economy{}, Rate{}, err
	}
	eco, err := r.Credit.LockEconomy(ctx)
	if err != nil {
		return store.Economy{}, Rate{}, err
	}
	rate, err := a.quote(ctx, r)
	if err != nil {
		return store.Economy{}, Rate{}, err
	}
	return eco, rate, nil
}
