package usecase

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// The limits of an impact record's text.
const (
	// MaxEvidence bounds the evidence: a URL or a sentence, not a report.
	MaxEvidence = 2000
	// MaxUnit bounds a usage record's unit ("requests", "installs").
	MaxUnit = 64
)

// The sources of an impact record.
const (
	ImpactFromAPI     = "api"
	ImpactFromWebhook = "webhook"
)

// The kind of the audit entry a usage record is (a revenue record is a
// movement per payee, of kind credit.KindRevenue).
const impactUsageEntry = "impact_usage"

// ImpactCmd records one impact record of an idea: usage (Quantity of a
// Unit) or revenue (AmountUSD).
type ImpactCmd struct {
	IdeaID string
	// Kind is impact.KindUsage or impact.KindRevenue.
	Kind string
	// Reference makes the record idempotent for the idea.
	Reference string
	Evidence  string
	Quantity  float64
	Unit      string
	AmountUSD float64
	Actor     string
	// Source is ImpactFromAPI (the default) or ImpactFromWebhook.
	Source string
	// Refused is the handler's refusal of the request's Idempotency-Key,
	// answered once the fields are valid (validate.go).
	Refused error
}

// validate checks the command's fields at once: the kind's own fields
// are required, the other kind's must be absent, so a record never says
// more than it means.
func (cmd ImpactCmd) validate() (qty, usd money.Micros, err error) {
	errs := []error{required("idea_id", cmd.IdeaID), credit.Text("reference", cmd.Reference, true), evidence(cmd.Evidence)}
	switch cmd.Kind {
	case impact.KindUsage:
		var qErr error
		qty, qErr = credit.Amount("quantity", cmd.Quantity, impact.MaxQuantity)
		errs = append(errs, qErr, unit(cmd.Unit))
		if cmd.AmountUSD != 0 {
			errs = append(errs, fault.Validation(fault.Field("amount_usd", "is for revenue records; a usage record has a quantity")))
		}
	case impact.KindRevenue:
		var uErr error
		usd, uErr = credit.Amount("amount_usd", cmd.AmountUSD, credit.MaxUSD)
		errs = append(errs, uErr)
		if cmd.Quantity != 0 || cmd.Unit != "" {
			errs = append(errs, fault.Validation(fault.Field("quantity", "and unit are for usage records; a revenue record has an amount_usd")))
		}
	case "":
		errs = append(errs, fault.Validation(fault.Field("kind", "is required: usage or revenue")))
	default:
		errs = append(errs, fault.Validation(fault.Field("kind", "must be usage or revenue")))
	}
	return qty, usd, collect(errs...)
}

func evidence(v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return fault.Validation(fault.Field("evidence", "is required: a URL or a sentence saying where the impact is measured"))
	case len(v) > MaxEvidence:
		return fault.Validation(fault.Field("evidence", "must be at most %d bytes", MaxEvidence))
	}
	return nil
}

func unit(v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return fault.Validation(fault.Field("unit", "is required for a usage record (requests, installs, …)"))
	case len(v) > MaxUnit:
		return fault.Validation(fault.Field("unit", "must be at most %d bytes", MaxUnit))
	}
	return nil
}

// ImpactPayout is what a revenue record paid one position.
type ImpactPayout struct {
	ContributorID string
	AmountCC      money.Micros
}

// ImpactResult is the record, and for a revenue record what it paid.
type ImpactResult struct {
	Record store.ImpactRecord
	// Payouts are a revenue record's parts, largest first (empty for
	// usage, and for a duplicate: the journal has them).
	Payouts []ImpactPayout
	// Duplicate is true when the reference was recorded before for the
	// idea: nothing was recorded again.
	Duplicate bool
}

// RecordImpact records an impact record of an idea, once per (idea,
// reference): a known reference with the same values answers the original
// record; with other values it is a conflict.
//
// A usage record adds impact.Earned(amount staked, quantity, the usage
// rate) to the earned attribution of every position active on the idea
// now, and is an audit entry. A revenue record is a deposit for the idea:
// the treasury grows by its USD, CC is minted at the buy rate (the spread
// kept, as for a deposit) and paid to the active positions in proportion
// to their earned attribution (impact.Pay), one movement per payee, each
// an audit entry, and the parts are their realized gains. An idea with no
// active position cannot be paid revenue: the record is refused, nothing
// enters the treasury.
func (a *App) RecordImpact(ctx context.Context, cmd ImpactCmd, idem *idempotency.Request) (ImpactResult, error) {
	qty, usd, err := cmd.validate()
	if err != nil {
		return ImpactResult{}, err
	}
	if cmd.Refused != nil {
		return ImpactResult{}, cmd.Refused
	}
	if cmd.Source == "" {
		cmd.Source = ImpactFromAPI
	}
	idea, err := a.idea(ctx, cmd.IdeaID)
	if err != nil {
		return ImpactResult{}, err
	}
	want := store.ImpactRecord{IdeaID: idea.ID, Reference: cmd.Reference, Kind: cmd.Kind, Quantity: qty, Unit: cmd.Unit, AmountUSD: usd,
		Evidence: cmd.Evidence, Actor: cmd.Actor, Source: cmd.Source}
	var out ImpactResult
	err = a.once(ctx, idem, &out, func(r Repos) error {
		out = ImpactResult{Payouts: []ImpactPayout{}}
		rec := want
		rec.ID, rec.CreatedAt = orderedID(), a.now()
		var eco store.Economy
		var rate Rate
		if cmd.Kind == impact.KindRevenue {
			// Minting: the mode lock and the economy row first, as every
			// movement of supply takes them, before the reference is read.
			if eco, rate, err = a.lockSupply(ctx, r); err != nil {
				return err
			}
		} else if err := r.Credit.LockModes(ctx, false); err != nil {
			return err
		}
		if prev, err := r.Impact.ImpactByReference(ctx, idea.ID, cmd.Reference); err == nil {
			out, err = retried(prev, want)
			return err
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		stakes, n, err := r.Impact.ActiveStakes(ctx, idea.ID, MaxPaidPayouts)
		if err != nil {
			return err
		}
		if n > MaxPaidPayouts {
			return fault.New(fault.Rejected, "an impact record may reach at most %d positions; idea %s has %d", MaxPaidPayouts, idea.ID, n)
		}
		rec.Positions = len(stakes)
		if cmd.Kind == impact.KindUsage {
			if err := a.recordUsage(ctx, r, &rec, stakes); err != nil {
				return err
			}
		} else if out.Payouts, err = a.payRevenue(ctx, r, &eco, rate, &rec, stakes); err != nil {
			return err
		}
		if err := r.Impact.InsertImpact(ctx, rec); err != nil {
			return err
		}
		out.Record = rec
		return r.Impact.NoteImpact(ctx, idea.ID, rec.CreatedAt)
	})
	if errors.Is(err, store.ErrAlreadyExists) {
		// Two usage records with one reference raced (they take the mode
		// lock shared only): the other committed first and this one rolled
		// back whole, attribution included. Answer as a retry would.
		prev, rerr := a.read().Impact.ImpactByReference(ctx, idea.ID, cmd.Reference)
		if rerr != nil {
			return ImpactResult{}, errors.Join(err, rerr)
		}
		return retried(prev, want)
	}
	if err == nil && !out.Duplicate {
		// Tell the portfolio now, so the idea answers the record at once;
		// when that fails, the notice stays for the publisher's next round.
		a.publishIdeaImpact(ctx, idea.ID)
	}
	return out, err
}

// retried answers a record whose reference the idea recorded before
// (prev): the original, as a duplicate, when want asks for the same
// record; a conflict when it asks for another.
func retried(prev, want store.ImpactRecord) (ImpactResult, error) {
	if prev.Kind != want.Kind || prev.Quantity != want.Quantity || prev.Unit != want.Unit || prev.AmountUSD != want.AmountUSD ||
		prev.Evidence != want.Evidence {
		return ImpactResult{}, fault.New(fault.Conflict, "reference %q was used for another impact record of idea %s", want.Reference,
			want.IdeaID)
	}
	return ImpactResult{Record: prev, Duplicate: true, Payouts: []ImpactPayout{}}, nil
}

// recordUsage adds the usage record's attribution to the active positions
// and queues its audit entry, in r's transaction (which holds the mode
// lock shared).
func (a *App) recordUsage(ctx context.Context, r Repos, rec *store.ImpactRecord, stakes []store.Stake) error {
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return err
	}
	// A usage record moves no CC, but it is a record of the economy and
	// weighs future payouts: a frozen or read-only economy takes none.
	if err := allowed(eco.Mode, impactUsageEntry); err != nil {
		return err
	}
	deltas := make([]store.AttributionDelta, 0, len(stakes))
	for _, st := range stakes {
		e := impact.Earned(st.Amount, rec.Quantity, a.cfg.ImpactUsageRate)
		rec.EarnedCC = impact.AddEarned(rec.EarnedCC, e)
		deltas = append(deltas, store.AttributionDelta{ContributorID: st.ContributorID, Earned: e})
	}
	if err := r.Impact.AddAttribution(ctx, rec.IdeaID, deltas); err != nil {
		return err
	}
	if err := r.Audit.Enqueue(ctx, []store.Queued{{ID: orderedID(), Entry: audit.Entry{
		Kind: impactUsageEntry, At: rec.CreatedAt, Actor: rec.Actor, Subject: rec.IdeaID, Amount: int64(rec.Quantity),
		Attrs: map[string]string{"impact_id": rec.ID, "idea_id": rec.IdeaID, "reference": rec.Reference, "unit": rec.Unit,
			"evidence": rec.Evidence, "earned_cc": rec.EarnedCC.String(), "positions": strconv.Itoa(rec.Positions),
			"rate": a.cfg.ImpactUsageRate.String(), "source": rec.Source},
	}}}); err != nil {
		return err
	}
	a.queued.Store(true)
	return nil
}

// payRevenue mints the revenue record's CC and pays it to the positions,
// in r's transaction, which holds the economy row (eco).
func (a *App) payRevenue(ctx context.Context, r Repos, eco *store.Economy, rate Rate, rec *store.ImpactRecord,
	stakes []store.Stake) ([]ImpactPayout, error) {
	if len(stakes) == 0 {
		return nil, fault.New(fault.Rejected, "no position on idea %s is active: revenue is paid to the idea's stakers, and none has CC staked on it",
			rec.IdeaID)
	}
	minted, fee, err := rate.Quote.Mint(rec.AmountUSD)
	if err != nil {
		return nil, fault.Validation(fault.Field("amount_usd", "is too large to mint at %s CC per USD", rate.Quote.Buy))
	}
	if minted < credit.MinMovement {
		return nil, fault.Validation(fault.Field("amount_usd", "is too small: revenue must mint at least %s CC, and %s USD mints %s CC",
			ccText(credit.MinMovement), ccText(rec.AmountUSD), ccText(minted)))
	}
	ps := make([]impact.Position, len(stakes))
	for i, st := range stakes {
		ps[i] = impact.Position{ContributorID: st.ContributorID, Amount: st.Amount, Earned: st.Earned}
	}
	parts := impact.Pay(minted, ps)
	payouts := make([]ImpactPayout, 0, len(parts))
	deltas := make([]store.AttributionDelta, 0, len(parts))
	first, from := true, supplyPoint{eco.OutstandingCC, eco.TreasuryUSD}
	for i, p := range parts {
		if p <= 0 {
			continue
		}
		m := movement{
			entry:       credit.Transfer(credit.KindRevenue, credit.Issuance, credit.Available(stakes[i].ContributorID), p),
			contributor: stakes[i].ContributorID, idea: rec.IdeaID, amount: p, mint: p, actor: rec.Actor,
			attrs: map[string]string{"impact_id": rec.ID, "reference": rec.Reference},
		}
		if first {
			// The first payee's movement carries the record's USD and spread,
			// so the treasury and the fee are recorded once.
			m.treasury, m.feeUSD = rec.AmountUSD, fee
			m.attrs["amount_usd"], m.attrs["buy_rate"], m.attrs["minted_cc"] = rec.AmountUSD.String(), rate.Quote.Buy.String(),
				minted.String()
		} else {
			m.fillFrom = &from
		}
		id, _, err := a.move(ctx, r, eco, rate, m)
		if err != nil {
			return nil, err
		}
		if first {
			rec.EntryID, first = id, false
		}
		payouts = append(payouts, ImpactPayout{ContributorID: stakes[i].ContributorID, AmountCC: p})
		deltas = append(deltas, store.AttributionDelta{ContributorID: stakes[i].ContributorID, Realized: p})
	}
	rec.MintedCC, rec.FeeUSD = minted, fee
	sortPayouts(payouts)
	return payouts, r.Impact.AddAttribution(ctx, rec.IdeaID, deltas)
}

// sortPayouts orders payouts largest first, then by contributor.
func sortPayouts(ps []ImpactPayout) {
	slices.SortFunc(ps, func(a, b ImpactPayout) int {
		if a.AmountCC != b.AmountCC {
			if a.AmountCC > b.AmountCC {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ContributorID, b.ContributorID)
	})
}

// IdeaImpact is a page of an idea's impact records with their totals.
type IdeaImpact struct {
	Idea   IdeaInfo
	Totals store.ImpactTotals
	Listed[store.ImpactRecord]
}

// Impact returns a page of an idea's impact records, newest first
// (credit.Page), and the totals of all of them.
func (a *App) Impact(ctx context.Context, ideaID string, p Page) (IdeaImpact, error) {
	limit, offset, err := credit.Page(p.Limit, p.Offset)
	if err := collect(required("idea_id", ideaID), err); err != nil {
		return IdeaImpact{}, err
	}
	idea, err := a.idea(ctx, ideaID)
	if err != nil {
		return IdeaImpact{}, err
	}
	r := a.read()
	totals, err := r.Impact.ImpactTotals(ctx, idea.ID)
	if err != nil {
		return IdeaImpact{}, err
	}
	page, err := listed(limit, offset, func(l, o int) ([]store.ImpactRecord, int, error) {
		return r.Impact.ListImpact(ctx, idea.ID, l, o)
	})
	return IdeaImpact{Idea: idea, Totals: totals, Listed: page}, err
}

// ImpactDeliveryActor is the actor of a usage record from the signed
// impact webhook: whoever holds FOUNDRY_IMPACT_WEBHOOK_SECRET.
const ImpactDeliveryActor = "webhook:impact"

// RecordImpactDelivery records a signed impact webhook delivery (the
// handler verified its signature) as a usage record: the body names the
// idea, the quantity, the unit, the evidence and the reference, which
// makes a redelivery record nothing (the signature covers the reference,
// so a captured body replayed changes nothing either).
func (a *App) RecordImpactDelivery(ctx context.Context, body []byte) (ImpactResult, error) {
	d, err := impact.DecodeDelivery(body)
	if err != nil {
		return ImpactResult{}, err
	}
	return a.RecordImpact(ctx, ImpactCmd{IdeaID: d.IdeaID, Kind: impact.KindUsage, Reference: d.Reference, Evidence: d.Evidence,
		Quantity: d.Quantity, Unit: d.Unit, Actor: ImpactDeliveryActor, Source: ImpactFromWebhook}, nil)
}
