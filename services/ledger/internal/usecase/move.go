package usecase

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/google/uuid"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

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
	// fillFrom, for the movements of one revenue record after its first,
	// is the supply before the record: the record brings its USD in its
	// first movement and mints for each payee in its own, so whether it
	// raises the reserve ratio is a question about all of them together.
	fillFrom *supplyPoint
}

// supplyPoint is the CC outstanding and the treasury at one moment.
type supplyPoint struct{ outstanding, treasury money.Micros }

// move is the one function every CC movement goes through, inside the use
// case's transaction. A transfer inside the economy (eco nil: a stake, an
// unstake, a release) changes no supply, so it takes no economy row: it
// reads the economy's mode under the shared mode lock in the same round
// trip as its writes, and locks only the accounts it moves. A movement that
// mints or burns CC or moves the treasury passes eco, read by begin under
// the shared mode lock and then locked, with the rate in force read under
// that lock: move refuses an exchange between USD and CC while the oracle
// breaker is open and a CC outstanding or treasury past what the ledger
// can count, updates both and checks the backing invariant (eco is updated
// in place and saved). Either way move refuses a movement the mode does
// not allow and any contributor balance below zero, and queues the
// movement's audit entry (and its spread fee's) for the sequencer. It
// returns the journal entry's id and the balances the accounts were left
// with.
func (a *App) move(ctx context.Context, r Repos, eco *store.Economy, rate Rate, m movement) (string, store.Applied, error) {
	exchanges := m.mint != 0 || m.burn != 0 || m.treasury != 0
	if exchanges && eco == nil {
		return "", store.Applied{}, fmt.Errorf("%s moves supply: it must lock the economy", m.entry.Kind)
	}
	var outstanding, treasury money.Micros
	// fills: a deposit (or an idea's revenue) brings USD in and mints
	// less CC than it is worth at mid, so while the reserve ratio is
	// below that it raises the ratio. Such a movement is accepted whenever
	// it raises the ratio: while minting is paused, and while the economy
	// is under-reserved, where the backing check would refuse any deposit
	// short of the whole hole (the issue saw 1 USD refused, 2 000 taken).
	fills := (m.entry.Kind == credit.KindDeposit || m.entry.Kind == credit.KindRevenue) && (m.treasury > 0 || m.fillFrom != nil)
	if eco != nil {
		if err := allowed(eco.Mode, m.entry.Kind); err != nil && (!fills || eco.Mode != ModeMintingPaused) {
			return "", store.Applied{}, err
		}
		// The breaker's state is the newest reading's, read after the
		// economy row was locked, and a reading takes that lock too: a
		// movement that follows a trip sees it, with no wait for the
		// monitor to pause minting.
		if exchanges && rate.Breaker.Tripped {
			return "", store.Applied{}, fault.New(fault.Rejected, BreakerOpen)
		}
		// Checked before the journal is written, so no balance column is
		// ever asked to hold more than an int64.
		var err error
		outstanding, treasury, err = credit.NextSupply(eco.OutstandingCC, eco.TreasuryUSD, m.mint, m.burn, m.treasury)
		if err != nil {
			return "", store.Applied{}, fault.New(fault.Rejected,
				"supply limit reached: this would take the CC outstanding (%s) or the treasury (%s USD) past what the ledger can count",
				eco.OutstandingCC, eco.TreasuryUSD)
		}
	}
	now := a.now()
	id := orderedID()
	attrs := map[string]string{"entry_id": id, "unit": "micro_cc"}
	if m.idea != "" {
		attrs["idea_id"] = m.idea
	}
	for _, l := range m.entry.Lines {
		attrs[audit.LineAttr(l.Account.Name())] = strconv.FormatInt(int64(l.Delta), 10)
	}
	maps.Copy(attrs, m.attrs)
	queued := []store.Queued{{ID: orderedID(), EntryID: id, Entry: audit.Entry{
		Kind: string(m.entry.Kind), At: now, Actor: m.actor, Subject: m.contributor, Amount: int64(m.amount), Attrs: attrs,
	}}}
	if m.feeUSD > 0 {
		queued = append(queued, store.Queued{ID: orderedID(), Entry: audit.Entry{
			Kind: "spread_fee", At: now, Actor: m.actor, Subject: m.contributor, Amount: int64(m.feeUSD),
			Attrs: map[string]string{"entry_id": id, "unit": "micro_usd", "movement": string(m.entry.Kind),
				"spread_bp": strconv.FormatInt(rate.Quote.SpreadBP, 10), "mid": rate.Quote.Mid.String()},
		}})
	}
	applied, err := r.Credit.Apply(ctx, store.Movement{
		Journal:  store.JournalEntry{ID: id, Entry: m.entry, ContributorID: m.contributor, IdeaID: m.idea, Amount: m.amount, CreatedAt: now},
		Audit:    queued,
		ReadMode: eco == nil,
	})
	if eco == nil && (err == nil || errors.Is(err, store.ErrInsufficient)) {
		// The mode first: a frozen economy refuses whatever the balance.
		if merr := allowed(applied.Mode, m.entry.Kind); merr != nil {
			return "", store.Applied{}, merr
		}
	}
	if errors.Is(err, store.ErrInsufficient) {
		return "", store.Applied{}, fmt.Errorf("%w (%w)",
			fault.New(fault.Rejected, "insufficient balance: %s CC is more than is %s", m.amount, sourceBucket(m.entry)), err)
	}
	if err != nil {
		return "", store.Applied{}, err
	}
	a.queued.Store(true)
	if eco == nil {
		return id, applied, nil
	}
	from := supplyPoint{eco.OutstandingCC, eco.TreasuryUSD}
	if m.fillFrom != nil {
		from = *m.fillFrom
	}
	raises := credit.RaisesRatio(from.outstanding, from.treasury, outstanding, treasury, rate.Quote.Mid)
	if fills && eco.Mode == ModeMintingPaused && !raises {
		return "", store.Applied{}, fault.New(fault.Rejected,
			"minting_paused: only a deposit that raises the reserve ratio is accepted now, and this one would lower it")
	}
	eco.OutstandingCC, eco.TreasuryUSD = outstanding, treasury
	if eco.TreasuryUSD < 0 || eco.OutstandingCC < 0 {
		return "", store.Applied{}, fault.New(fault.Rejected, "backing: the treasury cannot pay this out")
	}
	if !credit.Backed(eco.OutstandingCC, eco.TreasuryUSD, rate.Quote.Mid) && !(fills && raises) {
		return "", store.Applied{}, fault.New(fault.Rejected,
			"backing: this would leave %s CC outstanding against %s USD at %s CC per USD (the reserve ratio must stay at or above 1.0)",
			eco.OutstandingCC, eco.TreasuryUSD, rate.Quote.Mid)
	}
	eco.UpdatedAt = now
	if err := r.Credit.SaveEconomy(ctx, *eco); err != nil {
		return "", store.Applied{}, err
	}
	// The day's backing, for the supply history: this transaction holds
	// the economy row, so the day's row is written by one movement at a
	// time and ends the day with its last values.
	return id, applied, r.Credit.SaveSupplyDay(ctx, store.SupplyDay{Day: now, OutstandingCC: eco.OutstandingCC,
		TreasuryUSD: eco.TreasuryUSD, ReserveRatio: credit.ReserveRatio(eco.OutstandingCC, eco.TreasuryUSD, rate.Quote.Mid)})
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

// once runs a money movement op in one transaction, at most once per
// idempotency key (idempotency.Runner.Do). Concurrent requests with the
// same key queue on the key's lock before the lookup, so a retry waits for
// the first and then finds its record (without it, the retry would run
// too and could fail on the balance the first one spent, instead of
// answering what the first one did).
func (a *App) once(ctx context.Context, key *idempotency.Request, out any, op func(r Repos) error) error {
	return a.keyed.Do(ctx, key, out, func(r Repos) error {
		return r.Credit.LockKey(ctx, key.Scope, key.Key)
	}, op)
}

// begin starts a movement that mints or burns CC for a contributor,
// inside the use case's transaction: the contributor must exist (it is
// returned, so the answer names it by handle at no other read), the mode
// lock is taken shared and the economy row locked (so such movements are
// serialised with each other and with the oracle's readings, and the
// backing check is exact), and the rate in force is read; with release,
// the contributor's cooled lots move back to available first, so the
// movement can use them.
func (a *App) begin(ctx context.Context, r Repos, contributorID, actor string, release bool) (store.Contributor, store.Economy, Rate, error) {
	c, err := a.contributor(ctx, r, contributorID)
	if err != nil {
		return store.Contributor{}, store.Economy{}, Rate{}, err
	}
	eco, rate, err := a.lockSupply(ctx, r)
	if err != nil {
		return store.Contributor{}, store.Economy{}, Rate{}, err
	}
	if release {
		if err := a.releaseDue(ctx, r, contributorID, actor); err != nil {
			return store.Contributor{}, store.Economy{}, Rate{}, err
		}
	}
	return c, eco, rate, nil
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

func (a *App) mustExist(ctx context.Context, r Repos, contributorID string) error {
	_, err := a.contributor(ctx, r, contributorID)
	return err
}

// contributor reads a contributor; NotFound when there is none.
func (a *App) contributor(ctx context.Context, r Repos, contributorID string) (store.Contributor, error) {
	c, err := r.Identity.GetContributor(ctx, contributorID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Contributor{}, fault.New(fault.NotFound, "contributor %s not found", contributorID)
	}
	return c, err
}

// orderedID makes the id of a journal entry or a queued audit entry:
// time-ordered (UUIDv7, increasing within the process), so movements of one
// contributor in the same microsecond still list in the order they were
// made (History), and the queue hands the sequencer its entries in that
// order too.
func orderedID() string { return uuid.Must(uuid.NewV7()).String() }
