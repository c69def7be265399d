package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// WithdrawCmd burns a contributor's available CC for USD.
type WithdrawCmd struct {
	ContributorID string
	// AmountCC is the request's amount_cc (credit.Amount, credit.MaxCC).
	AmountCC float64
	Actor    string
	// Refused is the handler's refusal of the caller or of its
	// Idempotency-Key, answered once the fields are valid (validate.go).
	Refused error
}

// validate checks the command's fields at once and returns the amount.
func (cmd WithdrawCmd) validate() (money.Micros, error) {
	cc, amountErr := credit.Amount("amount_cc", cmd.AmountCC, credit.MaxCC)
	return cc, collect(required("contributor_id", cmd.ContributorID), amountErr)
}

// WithdrawResult is the USD paid out and the spread kept.
type WithdrawResult struct {
	ContributorID string
	AmountCC      money.Micros
	AmountUSD     money.Micros
	FeeUSD        money.Micros
	SellRate      money.Micros
	CreatedAt     time.Time
	// ContributorHandle is the contributor's handle, from the read that
	// checks it exists.
	ContributorHandle string
}

// Withdraw burns CC at the sell rate and pays the USD out of the treasury.
// The command's fields are checked first, then the handler's refusal, then
// what one movement may move (checkMovement), then the contributor's own
// account against the log (checkOwnAccount).
func (a *App) Withdraw(ctx context.Context, cmd WithdrawCmd, idem *idempotency.Request) (WithdrawResult, error) {
	cc, err := cmd.validate()
	if err != nil {
		return WithdrawResult{}, err
	}
	if cmd.Refused != nil {
		return WithdrawResult{}, cmd.Refused
	}
	if err := checkMovement(cc, nil); err != nil {
		return WithdrawResult{}, err
	}
	if err := a.checkOwnAccount(ctx, cmd.ContributorID); err != nil {
		return WithdrawResult{}, err
	}
	var out WithdrawResult
	err = a.once(ctx, idem, &out, func(r Repos) error {
		c, eco, rate, err := a.begin(ctx, r, cmd.ContributorID, cmd.Actor, true)
		if err != nil {
			return err
		}
		usd, fee, err := rate.Quote.Burn(cc)
		if err != nil || usd <= 0 {
			return fault.Validation(fault.Field("amount_cc", "is too small or too large to pay out at %s CC per USD", rate.Quote.Sell))
		}
		if _, _, err := a.move(ctx, r, &eco, rate, movement{
			entry:       credit.Transfer(credit.KindWithdraw, credit.Available(cmd.ContributorID), credit.Issuance, cc),
			contributor: cmd.ContributorID, amount: cc, burn: cc, treasury: -usd, feeUSD: fee,
			actor: cmd.Actor,
			attrs: map[string]string{"amount_usd": usd.String(), "sell_rate": rate.Quote.Sell.String()},
		}); err != nil {
			return err
		}
		out = WithdrawResult{ContributorID: cmd.ContributorID, AmountCC: cc, AmountUSD: usd, FeeUSD: fee,
			SellRate: rate.Quote.Sell, CreatedAt: a.now(), ContributorHandle: c.Handle}
		return nil
	})
	return out, err
}
