package usecase

import (
	"context"
	"maps"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// The economy's modes, from the monitor's graduated response and the
// emergency freeze. Each refuses more than the one before it.
const (
	// ModeNormal refuses nothing.
	ModeNormal = "normal"
	// ModeWarning refuses nothing; it says the monitor saw a problem.
	ModeWarning = "warning"
	// ModeMintingPaused refuses deposits (no new CC).
	ModeMintingPaused = "minting_paused"
	// ModeReadOnly refuses every CC movement.
	ModeReadOnly = "read_only"
	// ModeFrozen refuses every CC movement until an administrator unfreezes.
	ModeFrozen = "frozen"
)

// Modes lists the modes, mildest first: the API's EconomyMode enum has
// exactly these words, in this order (the handler's tests pin them).
var Modes = []string{ModeNormal, ModeWarning, ModeMintingPaused, ModeReadOnly, ModeFrozen}

// modeRank orders the modes by severity.
var modeRank = ranks(Modes)

func ranks(modes []string) map[string]int {
	r := make(map[string]int, len(modes))
	for i, m := range modes {
		r[m] = i
	}
	return r
}

// allowed refuses a movement the economy's mode does not allow. The
// detail is the mode's name, which clients can match on.
func allowed(mode string, kind credit.Kind) error {
	switch mode {
	case ModeFrozen:
		return fault.New(fault.Rejected, "frozen")
	case ModeReadOnly:
		return fault.New(fault.Rejected, "read_only")
	case ModeMintingPaused:
		if kind == credit.KindDeposit || kind == credit.KindRevenue {
			return fault.New(fault.Rejected, "minting_paused")
		}
	}
	return nil
}

// BreakerOpen is the detail of a deposit, withdrawal or CC payout refused
// while the oracle breaker is open: the rate is held at its last good
// value, and USD and CC are not exchanged at a rate nobody vouches for.
const BreakerOpen = "oracle_breaker_tripped"

// ModeChange is the economy's mode after a freeze, an unfreeze or a
// monitor decision.
type ModeChange struct {
	Mode   string
	Reason string
	Actor  string
	Since  time.Time
	// Changed is false when the mode was already the one asked for.
	Changed bool
}

// SetMode applies the monitor's graduated response. The monitor only
// escalates or returns to normal from its own modes: it never lifts a freeze
// (an administrator unfreezes) and never overrides a stricter mode set by a
// person. The reason is checked before the mode (credit.Text: required),
// and a request with both wrong learns about the reason alone, as the API
// has always answered.
func (a *App) SetMode(ctx context.Context, mode, reason, actor string) (ModeChange, error) {
	if err := credit.Text("reason", reason, true); err != nil {
		return ModeChange{}, err
	}
	if _, ok := modeRank[mode]; !ok {
		return ModeChange{}, fault.Validation(fault.Field("mode", "must be one of normal, warning, minting_paused, read_only, frozen"))
	}
	var out ModeChange
	err := a.tx(ctx, func(r Repos) error {
		eco, err := a.lockModes(ctx, r)
		if err != nil {
			return err
		}
		// The ledger's own findings hold the economy whatever the monitor
		// last saw: its decision may predate them.
		held, err := a.openFindings(ctx, r)
		if err != nil {
			return err
		}
		mode, reason := mode, reason
		if modeRank[held.Mode()] > modeRank[mode] {
			mode, reason = held.Mode(), reason+"; held at "+held.Mode()+" by open integrity findings: "+held.Summary()
		}
		if eco.Mode == mode || eco.Mode == ModeFrozen {
			out = ModeChange{Mode: eco.Mode, Reason: eco.ModeReason, Actor: eco.ModeActor, Since: eco.ModeSince}
			return nil
		}
		out, err = a.changeMode(ctx, r, &eco, mode, reason, actor, "monitor", nil)
		return err
	})
	a.countFreeze(out, err)
	return out, err
}

// lockModes starts a change of the economy's mode: the mode lock is taken
// exclusively, so every movement that read the old mode has committed (or
// rolled back) and every later one reads the new mode, then the economy
// row is locked. A movement that commits after a freeze committed is
// therefore impossible (docs/ledger.md, "Modes are exact").
func (a *App) lockModes(ctx context.Context, r Repos) (store.Economy, error) {
	if err := r.Credit.LockModes(ctx, true); err != nil {
		return store.Economy{}, err
	}
	return r.Credit.LockEconomy(ctx)
}

// changeMode records a mode change in the economy, the audit chain and the
// incident log, in the caller's transaction. extra are more attributes of
// the audit entry (a freeze's issued_at and nonce).
func (a *App) changeMode(ctx context.Context, r Repos, eco *store.Economy, mode, reason, actor, kind string,
	extra map[string]string) (ModeChange, error) {
	now := a.now()
	from := eco.Mode
	eco.Mode, eco.ModeReason, eco.ModeActor, eco.ModeSince, eco.UpdatedAt = mode, reason, actor, now, now
	attrs := map[string]string{"from": from, "to": mode, "reason": reason}
	maps.Copy(attrs, extra)
	if err := a.appendOrQueue(ctx, r, eco, audit.Entry{Kind: kind, At: now, Actor: actor, Subject: "economy",
		Attrs: attrs}); err != nil {
		return ModeChange{}, err
	}
	severity := "info"
	switch {
	case modeRank[mode] >= modeRank[ModeReadOnly]:
		severity = "critical"
	case modeRank[mode] > modeRank[ModeNormal]:
		severity = "warning"
	}
	if err := r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: kind, Severity: severity,
		Detail: from + " → " + mode + ": " + reason, Actor: actor, CreatedAt: now}); err != nil {
		return ModeChange{}, err
	}
	// appendOrQueue saved eco.
	return ModeChange{Mode: mode, Reason: reason, Actor: actor, Since: now, Changed: true}, nil
}
