package usecase

import (
	"context"
	"errors"
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
	// AmountUSD is the request's amount_usd: more than 0, at most
	// credit.MaxUSD, at most six decimals.
	AmountUSD float64
	// Reference (the payment's reference) makes the deposit idempotent.
	Reference string
	Actor     string
	// Refused is the handler's refusal of the request's Idempotency-Key,
	// answered once the fields are valid (validate.go).
	Refused error
}

// validate checks the command's fields at once and returns the amount.
func (cmd DepositCmd) validate() (money.Micros, error) {
	usd, amountErr := credit.Amount("amount_usd", cmd.AmountUSD, credit.MaxUSD)
	return usd, collect(required("contributor_id", cmd.ContributorID), amountErr, credit.Text("reference", cmd.Reference, true))
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
	// ContributorHandle is the contributor's handle ("" for one that never
	// registered), from the read that checks it exists.
	ContributorHandle string
}

// Deposit mints CC at the buy rate for a confirmed deposit and grows the
// treasury by its USD. A known reference with the same contributor and
// amount answers the original deposit; with other values it is a conflict.
func (a *App) Deposit(ctx context.Context, cmd DepositCmd, idem *idempotency.Request) (DepositResult, error) {
	usd, err := cmd.validate()
	if err != nil {
		return DepositResult{}, err
	}
	if cmd.Refused != nil {
		return DepositResult{}, cmd.Refused
	}
	var out DepositResult
	err = a.once(ctx, idem, &out, func(r Repos) error {
		c, eco, rate, err := a.begin(ctx, r, cmd.ContributorID, cmd.Actor, false)
		if err != nil {
			return err
		}
		if prev, err := r.Credit.DepositByReference(ctx, cmd.Reference); err == nil {
			if prev.ContributorID != cmd.ContributorID || prev.AmountUSD != usd {
				return fault.New(fault.Conflict, "reference %q was used for another deposit", cmd.Reference)
			}
			out = DepositResult{ContributorID: prev.ContributorID, AmountUSD: prev.AmountUSD, MintedCC: prev.MintedCC,
				FeeUSD: prev.FeeUSD, BuyRate: prev.BuyRate, Reference: prev.Reference, Duplicate: true, CreatedAt: prev.CreatedAt,
				ContributorHandle: c.Handle}
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		minted, fee, err := rate.Quote.Mint(usd)
		if err != nil {
			return fault.Validation(fault.Field("amount_usd", "is too large to mint at %s CC per USD", rate.Quote.Buy))
		}
		if minted < credit.MinMovement {
			return fault.Validation(fault.Field("amount_usd", "is too small: a deposit must mint at least %s CC, and %s USD mints %s CC at %s CC per USD",
				ccText(credit.MinMovement), ccText(usd), ccText(minted), ccText(rate.Quote.Buy)))
		}
		id, _, err := a.move(ctx, r, &eco, rate, movement{
			entry:       credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available(cmd.ContributorID), minted),
			contributor: cmd.ContributorID, amount: minted, mint: minted, treasury: usd, feeUSD: fee,
			actor: cmd.Actor,
			attrs: map[string]string{"reference": cmd.Reference, "amount_usd": usd.String(),
				"buy_rate": rate.Quote.Buy.String()},
		})
		if err != nil {
			return err
		}
		now := a.now()
		if err := r.Credit.InsertDeposit(ctx, store.Deposit{Reference: cmd.Reference, EntryID: id, ContributorID: cmd.ContributorID,
			AmountUSD: usd, MintedCC: minted, BuyRate: rate.Quote.Buy, FeeUSD: fee, CreatedAt: now}); err != nil {
			return err
		}
		out = DepositResult{ContributorID: cmd.ContributorID, AmountUSD: usd, MintedCC: minted, FeeUSD: fee,
			Reference: cmd.Reference, BuyRate: rate.Quote.Buy, CreatedAt: now, ContributorHandle: c.Handle}
		return nil
	})
	return out, err
}
