package usecase

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
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

// modeRank orders the modes by severity.
var modeRank = map[string]int{ModeNormal: 0, ModeWarning: 1, ModeMintingPaused: 2, ModeReadOnly: 3, ModeFrozen: 4}

// movement is one CC movement, as every use case that moves CC describes
// it to move.
type movement struct {
	entry       credit.Entry
	contributor string
	idea        string
	// amount is the CC moved (positive), for history.
	amount money.Micros
	// mint and burn change the CC outstanding; treasury the USD held.
	mint, burn money.Micros
	treasury   money.Micros
	// feeUSD is the spread the movement kept, recorded as its own audit entry.
	feeUSD money.Micros
	actor  string
	attrs  map[string]string
}

// move is the one function every CC movement goes through, inside the use
// case's transaction after LockEconomy, with the rate in force read under
// that lock: it checks the economy's mode, refuses an exchange between USD
// and CC while the oracle breaker is open, refuses a CC outstanding or
// treasury past what the ledger can count, moves the balances (refusing
// any contributor balance below zero), updates the CC outstanding and the
// treasury, checks the backing invariant when either changed, and appends
// the movement (and its spread fee) to the audit chain. eco is updated in
// place and saved.
func (a *App) move(ctx context.Context, r Repos, eco *store.Economy, rate Rate, m movement) (string, error) {
	if err := allowed(eco.Mode, m.entry.Kind); err != nil {
		return "", err
	}
	exchanges := m.mint != 0 || m.burn != 0 || m.treasury != 0
	// The breaker's state is the newest reading's, read after the economy
	// row was locked, and a reading takes that lock too: a movement that
	// follows a trip sees it, with no wait for the monitor to pause minting.
	if exchanges && rate.Breaker.Tripped {
		return "", fault.New(fault.Rejected, BreakerOpen)
	}
	q := rate.Quote
	// Checked before the journal is written, so no balance column is ever
	// asked to hold more than an int64.
	outstanding, treasury, err := credit.NextSupply(eco.OutstandingCC, eco.TreasuryUSD, m.mint, m.burn, m.treasury)
	if err != nil {
		return "", fault.New(fault.Rejected,
			"supply limit reached: this would take the CC outstanding (%s) or the treasury (%s USD) past what the ledger can count",
			eco.OutstandingCC, eco.TreasuryUSD)
	}
	now := a.now()
	id := a.cfg.NewID()
	seq := eco.AuditSeq + 1
	err = r.Credit.ApplyEntry(ctx, store.JournalEntry{
		ID: id, Entry: m.entry, ContributorID: m.contributor, IdeaID: m.idea, Amount: m.amount, AuditSeq: seq, CreatedAt: now,
	})
	if errors.Is(err, store.ErrInsufficient) {
		return "", fault.New(fault.Rejected, "insufficient balance: %s CC is more than is %s", m.amount, sourceBucket(m.entry))
	}
	if errors.Is(err, store.ErrAuditSeqTaken) {
		// Someone rewound the audit log under the journal: the economy's
		// books cannot be trusted until an administrator looks (the
		// coherence check reports it and the monitor freezes).
		return "", fmt.Errorf("%w (%w)", fault.New(fault.Unavailable,
			"the journal and the audit log disagree (audit seq %d is taken): CC movements are refused until an administrator repairs the log", seq), err)
	}
	if err != nil {
		return "", err
	}
	eco.OutstandingCC, eco.TreasuryUSD = outstanding, treasury
	if eco.TreasuryUSD < 0 || eco.OutstandingCC < 0 {
		return "", fault.New(fault.Rejected, "backing: the treasury cannot pay this out")
	}
	if (m.mint != 0 || m.burn != 0 || m.treasury != 0) && !credit.Backed(eco.OutstandingCC, eco.TreasuryUSD, q.Mid) {
		return "", fault.New(fault.Rejected,
			"backing: this would leave %s CC outstanding against %s USD at %s CC per USD (the reserve ratio must stay at or above 1.0)",
			eco.OutstandingCC, eco.TreasuryUSD, q.Mid)
	}
	attrs := map[string]string{"entry_id": id, "unit": "micro_cc"}
	if m.idea != "" {
		attrs["idea_id"] = m.idea
	}
	for _, l := range m.entry.Lines {
		attrs["line:"+l.Account.Name()] = strconv.FormatInt(int64(l.Delta), 10)
	}
	for k, v := range m.attrs {
		attrs[k] = v
	}
	if err := a.appendAudit(ctx, r, eco, audit.Entry{
		Kind: string(m.entry.Kind), At: now, Actor: m.actor, Subject: m.contributor, Amount: int64(m.amount), Attrs: attrs,
	}); err != nil {
		return "", err
	}
	if m.feeUSD > 0 {
		if err := a.appendAudit(ctx, r, eco, audit.Entry{
			Kind: "spread_fee", At: now, Actor: m.actor, Subject: m.contributor, Amount: int64(m.feeUSD),
			Attrs: map[string]string{"entry_id": id, "unit": "micro_usd", "movement": string(m.entry.Kind),
				"spread_bp": strconv.FormatInt(q.SpreadBP, 10), "mid": q.Mid.String()},
		}); err != nil {
			return "", err
		}
	}
	eco.UpdatedAt = now
	return id, r.Credit.SaveEconomy(ctx, *eco)
}

// BreakerOpen is the detail of a deposit, withdrawal or CC payout refused
// while the oracle breaker is open: the rate is held at its last good
// value, and USD and CC are not exchanged at a rate nobody vouches for.
const BreakerOpen = "oracle_breaker_tripped"

// allowed refuses a movement the economy's mode does not allow. The
// detail is the mode's name, which clients can match on.
func allowed(mode string, kind credit.Kind) error {
	switch mode {
	case ModeFrozen:
		return fault.New(fault.Rejected, "frozen")
	case ModeReadOnly:
		return fault.New(fault.Rejected, "read_only")
	case ModeMintingPaused:
		if kind == credit.KindDeposit {
			return fault.New(fault.Rejected, "minting_paused")
		}
	}
	return nil
}

// sourceBucket names where a refused movement wanted to take CC from.
func sourceBucket(e credit.Entry) string {
	for _, l := range e.Lines {
		if l.Delta < 0 {
			if l.Account.Idea != "" {
				return l.Account.Bucket + " on idea " + l.Account.Idea
			}
			return l.Account.Bucket
		}
	}
	return "available"
}

// appendAudit seals e after the chain's head and stores it; eco's head
// moves (the caller saves eco).
func (a *App) appendAudit(ctx context.Context, r Repos, eco *store.Economy, e audit.Entry) error {
	e.Seq = eco.AuditSeq + 1
	if e.At.IsZero() {
		e.At = a.now()
	}
	rec := audit.Seal(eco.AuditHead, e)
	if err := r.Audit.Append(ctx, rec); err != nil {
		return err
	}
	eco.AuditSeq, eco.AuditHead = e.Seq, rec.Hash
	return nil
}

// once runs a money movement op in one transaction, at most once per
// idempotency key (idempotency.Runner.Do). Every money movement locks the
// economy row first; taking it before the lookup too makes a concurrent
// retry of the same key wait for the first and then find its record.
func (a *App) once(ctx context.Context, key *idempotency.Request, out any, op func(r Repos) error) error {
	return a.keyed.Do(ctx, key, out, func(r Repos) error {
		_, err := r.Credit.LockEconomy(ctx)
		return err
	}, op)
}
