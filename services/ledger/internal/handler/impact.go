package handler

import (
	"context"
	"net/http"

	"google.golang.org/protobuf/types/known/wrapperspb"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

func impactProto(r store.ImpactRecord) *ledgerv1.ImpactRecord {
	out := &ledgerv1.ImpactRecord{Id: r.ID, IdeaId: r.IdeaID, Kind: r.Kind, Reference: r.Reference, Evidence: r.Evidence,
		Quantity: micros(r.Quantity), Unit: r.Unit, EarnedCc: micros(r.EarnedCC), Positions: int64(r.Positions),
		AmountUsd: micros(r.AmountUSD), MintedCc: micros(r.MintedCC), FeeUsd: micros(r.FeeUSD), Source: r.Source,
		CreatedAt: wire.Time(r.CreatedAt)}
	if r.EntryID != "" {
		out.EntryId = wrapperspb.String(r.EntryID)
	}
	return out
}

// RecordImpact implements LedgerService.RecordImpact (a worker or an
// operator for usage, an administrator for revenue: the policy's
// condition on kind).
func (h *Handler) RecordImpact(ctx context.Context, req *ledgerv1.RecordImpactRequest) (*ledgerv1.RecordImpactResponse, error) {
	actor := authz.FromContext(ctx).Actor()
	key, keyErr := idempotency.FromContext(ctx, "impact", actor, req)
	res, err := h.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: req.GetIdeaId(), Kind: req.GetKind(), Reference: req.GetReference(),
		Evidence: req.GetEvidence(), Quantity: req.GetQuantity(), Unit: req.GetUnit(), AmountUSD: req.GetAmountUsd(), Actor: actor,
		Refused: keyErr}, key)
	if err != nil {
		return nil, err
	}
	if !res.Duplicate {
		rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	}
	out := &ledgerv1.RecordImpactResponse{Record: impactProto(res.Record), Duplicate: res.Duplicate,
		Payouts: make([]*ledgerv1.ImpactPayout, len(res.Payouts))}
	for i, p := range res.Payouts {
		out.Payouts[i] = &ledgerv1.ImpactPayout{ContributorId: p.ContributorID, AmountCc: micros(p.AmountCC)}
	}
	return out, nil
}

// RecordImpactDelivery implements LedgerService.RecordImpactDelivery: the
// signature over the raw body is verified before anything is read (who
// sent it), with the impact webhook's own secret.
func (h *Handler) RecordImpactDelivery(ctx context.Context, req *ledgerv1.RecordImpactDeliveryRequest) (*ledgerv1.RecordImpactDeliveryResponse, error) {
	if !h.impactHook.Required() {
		return nil, fault.New(fault.Unauthenticated, "no impact webhook secret is configured, so deliveries are refused: "+
			"set FOUNDRY_IMPACT_WEBHOOK_SECRET, and sign each body with it (X-Hub-Signature-256: sha256=<hex HMAC-SHA256>)")
	}
	if err := h.impactHook.Verify(req.GetBody(), req.GetSignature_256()); err != nil {
		return nil, err
	}
	res, err := h.app.RecordImpactDelivery(ctx, req.GetBody())
	if err != nil {
		return nil, err
	}
	return &ledgerv1.RecordImpactDeliveryResponse{Record: impactProto(res.Record), Duplicate: res.Duplicate}, nil
}

// ListIdeaImpact implements LedgerService.ListIdeaImpact.
func (h *Handler) ListIdeaImpact(ctx context.Context, req *ledgerv1.ListIdeaImpactRequest) (*ledgerv1.ListIdeaImpactResponse, error) {
	page, err := h.app.Impact(ctx, req.GetIdeaId(), usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, err
	}
	t := page.Totals
	totals := &ledgerv1.ImpactTotals{UsageRecords: int64(t.UsageRecords), RevenueRecords: int64(t.RevenueRecords),
		Usage: make([]*ledgerv1.ImpactUsage, len(t.Usage)), EarnedCc: micros(t.EarnedCC), RevenueUsd: micros(t.RevenueUSD),
		PaidCc: micros(t.PaidCC)}
	for i, u := range t.Usage {
		totals.Usage[i] = &ledgerv1.ImpactUsage{Unit: u.Unit, Quantity: micros(u.Quantity)}
	}
	if !t.LastAt.IsZero() {
		totals.LastRecordedAt = wrapperspb.String(wire.Time(t.LastAt))
	}
	out := &ledgerv1.ListIdeaImpactResponse{IdeaId: page.Idea.ID, Totals: totals, Records: make([]*ledgerv1.ImpactRecord, len(page.Items)),
		Pagination: pageOf(page.Listed)}
	for i, r := range page.Items {
		out.Records[i] = impactProto(r)
	}
	return out, nil
}
