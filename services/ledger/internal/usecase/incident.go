package usecase

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// FreezeCmd is a signer's emergency freeze.
type FreezeCmd struct {
	SignerID string
	Reason   string
	// Signature is hex HMAC-SHA256(signer's secret, Reason).
	Signature string
}

// Sign is the signature a signer sends with a freeze: hex
// HMAC-SHA256(secret, reason).
func Sign(secret, reason string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(reason))
	return hex.EncodeToString(m.Sum(nil))
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
// freeze. An unknown signer or a wrong signature is Forbidden; a frozen
// economy is a Conflict.
func (a *App) Freeze(ctx context.Context, cmd FreezeCmd) (ModeChange, error) {
	secret, ok := a.cfg.Signers[cmd.SignerID]
	got, err := hex.DecodeString(strings.ToLower(cmd.Signature))
	want, _ := hex.DecodeString(Sign(secret, cmd.Reason))
	// hmac.Equal is constant-time; an unknown signer is checked against a
	// signature under the empty secret so both refusals take as long.
	if !ok || err != nil || !hmac.Equal(got, want) {
		return ModeChange{}, fault.New(fault.Forbidden, "unknown signer or bad signature")
	}
	return a.setMode(ctx, ModeFrozen, cmd.Reason, "signer:"+cmd.SignerID, "freeze", true)
}

// Unfreeze lifts a freeze (an administrator's action) once the reserve
// ratio is back at or above 1.0. Not frozen is a Conflict.
func (a *App) Unfreeze(ctx context.Context, reason, actor string) (ModeChange, error) {
	var out ModeChange
	err := a.tx(ctx, func(r Repos) error {
		eco, err := r.Credit.LockEconomy(ctx)
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
		out, err = a.changeMode(ctx, r, &eco, ModeNormal, reason, actor, "unfreeze")
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
	return a.setMode(ctx, mode, reason, actor, "monitor", false)
}

func (a *App) setMode(ctx context.Context, mode, reason, actor, kind string, conflictIfSame bool) (ModeChange, error) {
	var out ModeChange
	err := a.tx(ctx, func(r Repos) error {
		eco, err := r.Credit.LockEconomy(ctx)
		if err != nil {
			return err
		}
		switch {
		case eco.Mode == mode && conflictIfSame:
			return fault.New(fault.Conflict, "already %s", mode)
		case eco.Mode == mode:
			out = ModeChange{Mode: eco.Mode, Reason: eco.ModeReason, Actor: eco.ModeActor, Since: eco.ModeSince}
			return nil
		case kind == "monitor" && eco.Mode == ModeFrozen:
			out = ModeChange{Mode: eco.Mode, Reason: eco.ModeReason, Actor: eco.ModeActor, Since: eco.ModeSince}
			return nil
		}
		out, err = a.changeMode(ctx, r, &eco, mode, reason, actor, kind)
		return err
	})
	return out, err
}

// changeMode records a mode change in the economy, the audit chain and the
// incident log, in the caller's transaction.
func (a *App) changeMode(ctx context.Context, r Repos, eco *store.Economy, mode, reason, actor, kind string) (ModeChange, error) {
	now := a.now()
	from := eco.Mode
	eco.Mode, eco.ModeReason, eco.ModeActor, eco.ModeSince, eco.UpdatedAt = mode, reason, actor, now, now
	if err := a.appendAudit(ctx, r, eco, audit.Entry{Kind: kind, At: now, Actor: actor, Subject: "economy",
		Attrs: map[string]string{"from": from, "to": mode, "reason": reason}}); err != nil {
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
	return ModeChange{Mode: mode, Reason: reason, Actor: actor, Since: now, Changed: true}, r.Credit.SaveEconomy(ctx, *eco)
}

// Incidents returns a page of incidents, newest first.
func (a *App) Incidents(ctx context.Context, limit, offset int) ([]store.Incident, error) {
	return a.read().Credit.ListIncidents(ctx, limit, offset)
}

// auditPage is how many records verification reads at a time.
const auditPage = 1000

// VerifyAudit walks the chain from its verification start (the first
// entry, or the last repair) in pages, in constant memory, and reports the
// first break.
func (a *App) VerifyAudit(ctx context.Context) (audit.Result, error) {
	res, _, err := a.VerifyAuditFrom(ctx)
	return res, err
}

// VerifyAuditFrom is VerifyAudit that also says where the walk started (0,
// or the seq of the last repair entry).
func (a *App) VerifyAuditFrom(ctx context.Context) (audit.Result, int64, error) {
	r := a.read()
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return audit.Result{}, 0, err
	}
	res, err := a.verifyFrom(ctx, r, eco)
	return res, eco.VerifyFromSeq, err
}

func (a *App) verifyFrom(ctx context.Context, r Repos, eco store.Economy) (audit.Result, error) {
	v := &audit.Verifier{}
	if eco.VerifyFromSeq > 0 {
		v = audit.Resume(eco.VerifyFromSeq, eco.VerifyFromHash)
	}
	// The walk ends at the economy row's head. Movements keep appending
	// while a verification outside their transaction (the monitor's, the
	// API's) reads: entries past the head it read belong to the next
	// check. Walking into them made a busy, sound chain look broken
	// ("entries missing"), and the monitor froze the economy for it.
	after := eco.VerifyFromSeq
	for after < eco.AuditSeq {
		page, err := r.Audit.Range(ctx, after, auditPage)
		if err != nil {
			return audit.Result{}, err
		}
		for _, rec := range page {
			if rec.Entry.Seq > eco.AuditSeq {
				break
			}
			if !v.Add(rec) {
				return v.Result(), nil
			}
		}
		if len(page) < auditPage {
			break
		}
		after = page[len(page)-1].Entry.Seq
	}
	res := v.Result()
	// The head the economy row remembers must be the last entry's hash:
	// truncating the table's tail is a break too.
	if res.OK && res.LastVerified != eco.AuditSeq {
		res.OK, res.FirstDivergent = false, res.LastVerified+1
		res.Reason = "entries missing: the chain's head is seq " + strconv.FormatInt(eco.AuditSeq, 10)
	}
	return res, nil
}

// Repair is what a repair did.
type Repair struct {
	Found    audit.Result
	Repaired bool
	// Seq is the repair entry's seq (0 when nothing was repaired).
	Seq int64
}

// RepairAudit verifies the chain and, when it is broken, appends a repair
// entry that names the break (last verified → first divergent) and chains
// to the current head; verification resumes from the repair entry. Rows are
// never rewritten or deleted, so the break stays visible in the history.
// A sound chain is left alone.
func (a *App) RepairAudit(ctx context.Context, actor string) (Repair, error) {
	var out Repair
	err := a.tx(ctx, func(r Repos) error {
		eco, err := r.Credit.LockEconomy(ctx)
		if err != nil {
			return err
		}
		found, err := a.verifyFrom(ctx, r, eco)
		if err != nil {
			return err
		}
		out = Repair{Found: found}
		if found.OK {
			return nil
		}
		e := audit.RepairEntry(eco.AuditSeq+1, a.now(), actor, found)
		if err := a.appendAudit(ctx, r, &eco, e); err != nil {
			return err
		}
		eco.VerifyFromSeq, eco.VerifyFromHash = eco.AuditSeq, eco.AuditHead
		if err := r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: "audit_repair", Severity: "critical",
			Detail: "audit chain broken after seq " + strconv.FormatInt(found.LastVerified, 10) + " at seq " +
				strconv.FormatInt(found.FirstDivergent, 10) + " (" + found.Reason + "); repair entry appended",
			Actor: actor, CreatedAt: a.now()}); err != nil {
			return err
		}
		out.Repaired, out.Seq = true, eco.AuditSeq
		return r.Credit.SaveEconomy(ctx, eco)
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
	// Mismatched lists accounts whose cached balance differs from their journal.
	Mismatched []string
}

// CheckCoherence verifies the chain and the balances against the journal
// and reports the supply.
func (a *App) CheckCoherence(ctx context.Context) (Coherence, error) {
	s, err := a.Supply(ctx)
	if err != nil {
		return Coherence{}, err
	}
	chain, err := a.VerifyAudit(ctx)
	if err != nil {
		return Coherence{}, err
	}
	mis, err := a.read().Credit.JournalMismatches(ctx)
	if err != nil {
		return Coherence{}, err
	}
	return Coherence{Supply: s, Chain: chain, Mismatched: mis}, nil
}
