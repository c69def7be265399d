package usecase

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// FreezeCmd is a signer's emergency freeze, as sent.
type FreezeCmd = credit.SignedFreeze

// maxFreezeText bounds a freeze's signer id and reason, as the API's other
// short texts.
const maxFreezeText = 500

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
	return out, err
}

// Unfreeze lifts a freeze (an administrator's action) once the reserve
// ratio is back at or above 1.0. Not frozen is a Conflict.
func (a *App) Unfreeze(ctx context.Context, reason, actor string) (ModeChange, error) {
	var out ModeChange
	err := a.tx(ctx, func(r Repos) error {
		eco, err := a.lockModes(ctx, r)
		if err != nil {
			return err
		}
		if eco.Mode != ModeFrozen {
			return fault.New(fault.Conflict, "not frozen")
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

// SetMode applies the monitor's graduated response. The monitor only
// escalates or returns to normal from its own modes: it never lifts a freeze
// (an administrator unfreezes) and never overrides a stricter mode set by a
// person.
func (a *App) SetMode(ctx context.Context, mode, reason, actor string) (ModeChange, error) {
	if _, ok := modeRank[mode]; !ok {
		return ModeChange{}, fault.Validation(fault.Field("mode", "must be one of normal, warning, minting_paused, read_only, frozen"))
	}
	var out ModeChange
	err := a.tx(ctx, func(r Repos) error {
		eco, err := a.lockModes(ctx, r)
		if err != nil {
			return err
		}
		if eco.Mode == mode || eco.Mode == ModeFrozen {
			out = ModeChange{Mode: eco.Mode, Reason: eco.ModeReason, Actor: eco.ModeActor, Since: eco.ModeSince}
			return nil
		}
		out, err = a.changeMode(ctx, r, &eco, mode, reason, actor, "monitor", nil)
		return err
	})
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
	// appendNow saved eco with the chain's new head.
	return ModeChange{Mode: mode, Reason: reason, Actor: actor, Since: now, Changed: true}, nil
}

// Incidents returns a page of incidents, newest first.
func (a *App) Incidents(ctx context.Context, limit, offset int) ([]store.Incident, error) {
	return a.read().Credit.ListIncidents(ctx, limit, offset)
}

// Repair is what a repair did.
type Repair struct {
	Found    audit.Result
	Repaired bool
	// Seq is the repair entry's seq (0 when nothing was repaired).
	Seq int64
	// Break is the stretch the repair accepted.
	Break audit.Break
}

// RepairAudit verifies the chain and, when it is broken, appends a repair
// entry that records the first break (audit.PlanBreak: the stretch of
// entries accepted, their fingerprint and the hash the chain resumes from)
// and chains to the current head. Rows are never rewritten or deleted, and
// verification keeps walking the whole chain: it accepts that stretch,
// reports it as repaired, and checks everything else, before and after it.
// One repair records one break; should verification then find another, it
// needs a repair of its own. A sound chain is left alone.
func (a *App) RepairAudit(ctx context.Context, actor string) (Repair, error) {
	var out Repair
	err := a.tx(ctx, func(r Repos) error {
		eco, err := r.Credit.LockEconomy(ctx)
		if err != nil {
			return err
		}
		found, v, err := a.walk(ctx, r, 1, audit.Genesis, eco.AuditSeq, nil)
		if err != nil {
			return err
		}
		out = Repair{Found: found}
		if found.OK {
			return nil
		}
		d, _ := v.Divergence()
		// What the entry after the one found chains to decides where the
		// rest of the chain resumes (audit.PlanBreak).
		nextPrev := eco.AuditHead
		if d.Found != nil && d.Found.Entry.Seq < eco.AuditSeq {
			next, err := r.Audit.Range(ctx, d.Found.Entry.Seq, 1)
			if err != nil {
				return err
			}
			if len(next) == 1 && next[0].Entry.Seq <= eco.AuditSeq {
				nextPrev = next[0].PrevHash
			}
		}
		b := audit.PlanBreak(d, nextPrev, eco.AuditSeq, eco.AuditHead)
		if err := a.appendNow(ctx, r, &eco, audit.RepairEntry(0, a.now(), actor, found, b)); err != nil {
			return err
		}
		b.RepairSeq, b.Reason, b.LastVerified, b.FirstDivergent = eco.AuditSeq, found.Reason, found.LastVerified, found.FirstDivergent
		if err := r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: "audit_repair", Severity: "critical",
			Detail: fmt.Sprintf("audit chain broken after seq %d at seq %d (%s); repair entry %d accepts seq %d to %d",
				found.LastVerified, found.FirstDivergent, found.Reason, eco.AuditSeq, b.From, b.To),
			Actor: actor, CreatedAt: a.now()}); err != nil {
			return err
		}
		out.Repaired, out.Seq, out.Break = true, eco.AuditSeq, b
		return nil
	})
	return out, err
}

// AuditEntries returns a page of the chain, newest first.
func (a *App) AuditEntries(ctx context.Context, limit, offset int) ([]audit.Record, error) {
	return a.read().Audit.Recent(ctx, limit, offset)
}

// AuditPage returns a page of the chain, newest first, and the number of
// entries in all.
func (a *App) AuditPage(ctx context.Context, limit, offset int) ([]audit.Record, int64, error) {
	r := a.read()
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return nil, 0, err
	}
	recs, err := r.Audit.Recent(ctx, limit, offset)
	return recs, eco.AuditSeq, err
}

// Coherence is the ledger's own check of itself for the monitor.
type Coherence struct {
	Supply Supply
	Chain  audit.Result
	// Log is the verification the chain's verdict comes from (incremental,
	// against the latest signed checkpoint).
	Log Verification
	// Backlog is what the sequencer has yet to integrate.
	Backlog Backlog
	// Mismatched lists accounts whose cached balance differs from their journal.
	Mismatched []string
	// Unreconciled lists where the journal and the audit trail disagree
	// (at most maxUnreconciled of them): a movement the trail does not
	// record, or an audit entry that records no movement.
	Unreconciled []store.Discrepancy
}

// maxUnreconciled caps the discrepancies one check reports: the first
// few say what happened, and a tampered database could have millions.
const maxUnreconciled = 100

// Trail is the audit trail's verdict as the coherence check reports it:
// the chain's verification, failed at the first discrepancy when the chain
// verifies but the journal and the trail disagree. A trail that lost a
// movement's entries (deleted, with the head rewound) still chains, so
// only this reconciliation sees it; it is as grave as a break, because
// the trail no longer records every movement, and is reported as one.
func (c Coherence) Trail() audit.Result {
	if !c.Chain.OK || len(c.Unreconciled) == 0 {
		return c.Chain
	}
	r := c.Chain
	d := c.Unreconciled[0]
	r.OK, r.FirstDivergent = false, d.AuditSeq
	if r.FirstDivergent == 0 {
		// A journal entry no audit entry records has no seq of its own:
		// the trail is wrong from the first entry not yet verified.
		r.FirstDivergent = r.LastVerified + 1
	}
	r.Reason = "the journal and the audit trail disagree: " + d.Problem
	if n := len(c.Unreconciled) - 1; n > 0 {
		r.Reason += fmt.Sprintf(" (and %d more)", n)
	}
	return r
}

// CheckCoherence verifies the chain and the balances against the journal
// and reports the supply.
func (a *App) CheckCoherence(ctx context.Context) (Coherence, error) {
	s, err := a.Supply(ctx)
	if err != nil {
		return Coherence{}, err
	}
	// The backlog before the log: when it is empty, the checkpoint read
	// after it covers every movement that committed before the check.
	backlog, err := a.AuditBacklog(ctx)
	if err != nil {
		return Coherence{}, err
	}
	ver, err := a.VerifyAudit(ctx, false)
	if err != nil {
		return Coherence{}, err
	}
	mis, err := a.read().Credit.JournalMismatches(ctx)
	if err != nil {
		return Coherence{}, err
	}
	un, err := a.read().Credit.Unreconciled(ctx, maxUnreconciled)
	if err != nil {
		return Coherence{}, err
	}
	return Coherence{Supply: s, Chain: ver.Result, Log: ver, Backlog: backlog, Mismatched: mis, Unreconciled: un}, nil
}
