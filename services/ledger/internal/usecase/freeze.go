package usecase

import (
	"context"
	"errors"
	"strings"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// FreezeCmd is a signer's emergency freeze, as sent.
type FreezeCmd = credit.SignedFreeze

// maxFreezeText bounds a freeze's signer id and reason, as the API's other
// short texts.
const maxFreezeText = credit.MaxText

// validateFreeze checks the freeze's fields are present and well formed
// (422); whether it is signed, fresh and new is decided after.
func validateFreeze(cmd FreezeCmd) error {
	var fields []fault.FieldError
	need := func(name, v string) bool {
		switch {
		case strings.TrimSpace(v) == "":
			fields = append(fields, fault.Field(name, "is required"))
		case len(v) > maxFreezeText:
			fields = append(fields, fault.Field(name, "must be at most %d bytes", maxFreezeText))
		default:
			return true
		}
		return false
	}
	need("signer_id", cmd.SignerID)
	if need("issued_at", cmd.IssuedAt) {
		if _, err := credit.ParseIssuedAt(cmd.IssuedAt); err != nil {
			fields = append(fields, fault.Field("issued_at", "%s", err.Error()))
		}
	}
	if need("nonce", cmd.Nonce) && !credit.ValidNonce(cmd.Nonce) {
		fields = append(fields, fault.Field("nonce", "must be %d to %d hex digits", credit.MinNonceHex, credit.MaxNonceHex))
	}
	need("reason", cmd.Reason)
	need("signature", cmd.Signature)
	if len(fields) > 0 {
		return fault.Validation(fields...)
	}
	return nil
}

// Freeze stops every CC movement at once: any one configured signer may
// freeze, with a request signed over its signer id, time, nonce and reason
// (credit.SignedFreeze). A missing or malformed field is Invalid; an
// unknown signer, a wrong signature, a time more than credit.FreezeWindow
// from the ledger's clock and a nonce the signer used before are
// Forbidden; a frozen economy is a Conflict. The nonce is spent by any
// request that gets that far, the Conflict included, so a signed request
// is accepted once at most whatever it found.
func (a *App) Freeze(ctx context.Context, cmd FreezeCmd) (ModeChange, error) {
	if err := validateFreeze(cmd); err != nil {
		return ModeChange{}, err
	}
	secret, known := a.cfg.Signers[cmd.SignerID]
	if !credit.VerifyFreeze(secret, known, cmd) {
		return ModeChange{}, fault.New(fault.Forbidden, "unknown signer or bad signature")
	}
	issued, _ := credit.ParseIssuedAt(cmd.IssuedAt)
	now := a.now()
	if !credit.FreshFreeze(issued, now) {
		return ModeChange{}, fault.New(fault.Forbidden,
			"issued_at is more than %s from the ledger's clock: sign the freeze again with the current time", credit.FreezeWindow)
	}
	nonce := strings.ToLower(cmd.Nonce)
	var (
		out    ModeChange
		frozen bool
	)
	err := a.tx(ctx, func(r Repos) error {
		frozen = false
		eco, err := a.lockModes(ctx, r)
		if err != nil {
			return err
		}
		// Forgetting expired nonces here keeps the table at the freezes of
		// the last few minutes, with no background job: a replay of one
		// forgotten is refused by its time.
		if _, err := r.Credit.PruneFreezeNonces(ctx, now.Add(-credit.FreezeNonceTTL)); err != nil {
			return err
		}
		err = r.Credit.RecordFreezeNonce(ctx, store.FreezeNonce{SignerID: cmd.SignerID, Nonce: nonce, IssuedAt: issued, SeenAt: now})
		if errors.Is(err, store.ErrAlreadyExists) {
			return fault.New(fault.Forbidden, "nonce was used before: every freeze needs a new one")
		}
		if err != nil {
			return err
		}
		if eco.Mode == ModeFrozen {
			frozen = true
			return nil // commit: the nonce stays spent
		}
		out, err = a.changeMode(ctx, r, &eco, ModeFrozen, cmd.Reason, "signer:"+cmd.SignerID, "freeze",
			map[string]string{"issued_at": cmd.IssuedAt, "nonce": nonce})
		return err
	})
	if err == nil && frozen {
		err = fault.New(fault.Conflict, "already %s", ModeFrozen)
	}
	a.countFreeze(out, err)
	return out, err
}

// countFreeze counts a change to frozen once its transaction committed
// (never inside it: a retried transaction would count twice).
func (a *App) countFreeze(m ModeChange, err error) {
	if err == nil && m.Changed && m.Mode == ModeFrozen {
		a.freezes.Inc()
	}
}

// DefaultUnfreezeReason is the reason an unfreeze records when its request
// gave none.
const DefaultUnfreezeReason = "unfrozen by an administrator"

// Unfreeze lifts a freeze (an administrator's action) once the reserve
// ratio is back at or above 1.0. The reason is optional (credit.Text;
// DefaultUnfreezeReason when empty). Not frozen is a Conflict.
func (a *App) Unfreeze(ctx context.Context, reason, actor string) (ModeChange, error) {
	if err := credit.Text("reason", reason, false); err != nil {
		return ModeChange{}, err
	}
	if reason == "" {
		reason = DefaultUnfreezeReason
	}
	var out ModeChange
	err := a.tx(ctx, func(r Repos) error {
		eco, err := a.lockModes(ctx, r)
		if err != nil {
			return err
		}
		if eco.Mode != ModeFrozen {
			return fault.New(fault.Conflict, "not frozen")
		}
		if held, err := a.openFindings(ctx, r); err != nil {
			return err
		} else if held.Total > 0 {
			return heldBy(held, "cannot unfreeze")
		}
		rate, err := a.quote(ctx, r)
		if err != nil {
			return err
		}
		if ratio := credit.ReserveRatio(eco.OutstandingCC, eco.TreasuryUSD, rate.Quote.Mid); ratio < 1 {
			return fault.New(fault.Rejected, "reserve ratio %.6f is below 1.0: restore the backing before unfreezing", ratio)
		}
		out, err = a.changeMode(ctx, r, &eco, ModeNormal, reason, actor, "unfreeze", nil)
		return err
	})
	return out, err
}
