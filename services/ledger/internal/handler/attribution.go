package handler

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/protobuf/types/known/structpb"

	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/paging"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

func assetProto(a store.Asset) *ledgerv1.Asset {
	return &ledgerv1.Asset{
		Id: a.ID, Type: a.Type, Name: a.Name, Description: a.Description,
		// The API's counts are 32-bit: a count past them answers the
		// largest, not a negative number, until they widen.
		TotalCost: a.TotalCost.Float64(), ContributionCount: int64(a.ContributionCount), CreatedAt: wire.Time(a.CreatedAt),
	}
}

func contributionProto(c store.Contribution) (*ledgerv1.Contribution, error) {
	meta, err := structpb.NewStruct(c.Metadata)
	if err != nil {
		return nil, fmt.Errorf("contribution %s metadata: %w", c.ID, err)
	}
	out := &ledgerv1.Contribution{
		Id: c.ID, ContributorId: c.ContributorID, AssetId: c.AssetID, CostAmount: c.Cost.Float64(),
		CoherenceScore: c.Coherence.Float64(), Metadata: meta, Source: c.Source, CreatedAt: wire.Time(c.CreatedAt),
		ContributorHandle: wire.OptString(c.ContributorHandle), Status: c.Status, ClaimedCostAmount: c.ClaimedCost.Float64(),
	}
	if r := c.Review; r != nil {
		verdict := attribution.VerdictAccept
		if r.Status == attribution.StatusRejected {
			verdict = attribution.VerdictReject
		}
		out.Review = &ledgerv1.ContributionReview{Verdict: verdict, Reason: r.Reason, ReviewedBy: r.By, ReviewedAt: wire.Time(r.At)}
	}
	return out, nil
}

func contributionsProto(cs []store.Contribution) ([]*ledgerv1.Contribution, error) {
	out := make([]*ledgerv1.Contribution, 0, len(cs))
	for _, c := range cs {
		p, err := contributionProto(c)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// distributionProto renders d with the page of its payouts at offset, at
// most limit of those d holds (a create holds all of them, a read its
// page), placed among all of them by its pagination.
func distributionProto(d store.Distribution, limit, offset int) *ledgerv1.Distribution {
	shown := d.Payouts
	if len(shown) > limit {
		shown = shown[:limit]
	}
	payouts := make([]*ledgerv1.Payout, 0, len(shown))
	for _, p := range shown {
		payouts = append(payouts, &ledgerv1.Payout{ContributorId: p.ContributorID, Amount: p.Amount.Float64(),
			ContributorHandle: wire.OptString(d.Handles[p.ContributorID]), ClaimedAmount: p.Claimed.Float64(), Unpaid: p.Unpaid})
	}
	return &ledgerv1.Distribution{
		Id: d.ID, AssetId: d.AssetID, ValueAmount: d.Value.Float64(), Payouts: payouts, CreatedAt: wire.Time(d.CreatedAt),
		PayoutCount: int64(d.PayoutCount), PaidCc: d.PaidCC,
		Pagination: paging.Of(limit, offset, d.PayoutCount, len(shown), ""),
	}
}

// notFound maps store.ErrNotFound to a 404 naming what is missing.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, store.ErrNotFound) {
		return fault.New(fault.NotFound, format, args...)
	}
	return err
}

// CreateAsset implements LedgerService.CreateAsset.
func (h *Handler) CreateAsset(ctx context.Context, req *ledgerv1.CreateAssetRequest) (*ledgerv1.CreateAssetResponse, error) {
	a, err := h.app.CreateAsset(ctx, usecase.CreateAssetCmd{Type: req.GetType(), Name: req.GetName(), Description: req.GetDescription()})
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &ledgerv1.CreateAssetResponse{Asset: assetProto(a)}, nil
}

// GetAsset implements LedgerService.GetAsset.
func (h *Handler) GetAsset(ctx context.Context, req *ledgerv1.GetAssetRequest) (*ledgerv1.GetAssetResponse, error) {
	a, err := h.app.GetAsset(ctx, req.GetId())
	if err != nil {
		return nil, notFound(err, "asset %q not found", req.GetId())
	}
	return &ledgerv1.GetAssetResponse{Asset: assetProto(a)}, nil
}

// ListAssets implements LedgerService.ListAssets.
func (h *Handler) ListAssets(ctx context.Context, req *ledgerv1.ListAssetsRequest) (*ledgerv1.ListAssetsResponse, error) {
	page, err := h.app.ListAssets(ctx, usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, err
	}
	out := make([]*ledgerv1.Asset, 0, len(page.Items))
	for _, a := range page.Items {
		out = append(out, assetProto(a))
	}
	return &ledgerv1.ListAssetsResponse{Assets: out, Pagination: pageOf(page)}, nil
}

// CreateContribution implements LedgerService.CreateContribution.
func (h *Handler) CreateContribution(ctx context.Context, req *ledgerv1.CreateContributionRequest) (*ledgerv1.CreateContributionResponse, error) {
	// The key is scoped by the credential that sent it and the contributor
	// the contribution is for: two contributors' keys never collide, nor
	// an operator's with the contributor's own. A retry answers the first
	// response, with its status (201).
	key, keyErr := idempotency.FromContext(ctx, "contribution", authz.FromContext(ctx).Actor()+"/"+req.GetContributorId(), req)
	c, err := h.app.CreateContribution(ctx, usecase.CreateContributionCmd{
		ContributorID: req.GetContributorId(), AssetID: req.GetAssetId(), CostAmount: req.CostAmount,
		Metadata: req.GetMetadata().AsMap(), Refused: keyErr,
		ByOperator: authz.Includes(authz.FromContext(ctx).Role, authz.Operator),
	}, key)
	if err != nil {
		return nil, err
	}
	out, err := contributionProto(c)
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &ledgerv1.CreateContributionResponse{Contribution: out}, nil
}

// ReviewContribution implements LedgerService.ReviewContribution (an
// operator).
func (h *Handler) ReviewContribution(ctx context.Context, req *ledgerv1.ReviewContributionRequest) (*ledgerv1.ReviewContributionResponse, error) {
	c, err := h.app.ReviewContribution(ctx, usecase.ReviewContributionCmd{ID: req.GetId(), Verdict: req.GetVerdict(),
		CostAmount: req.CostAmount, CoherenceScore: req.CoherenceScore, Reason: req.GetReason(),
		Actor: authz.FromContext(ctx).Actor()})
	if err != nil {
		return nil, err
	}
	out, err := contributionProto(c)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.ReviewContributionResponse{Contribution: out}, nil
}

// GetContribution implements LedgerService.GetContribution.
func (h *Handler) GetContribution(ctx context.Context, req *ledgerv1.GetContributionRequest) (*ledgerv1.GetContributionResponse, error) {
	c, err := h.app.GetContribution(ctx, req.GetId())
	if err != nil {
		return nil, notFound(err, "contribution %q not found", req.GetId())
	}
	out, err := contributionProto(c)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.GetContributionResponse{Contribution: out}, nil
}

// ListAssetContributions implements LedgerService.ListAssetContributions.
func (h *Handler) ListAssetContributions(ctx context.Context, req *ledgerv1.ListAssetContributionsRequest) (*ledgerv1.ListAssetContributionsResponse, error) {
	page, err := h.app.ListAssetContributions(ctx, req.GetAssetId(), usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, notFound(err, "asset %q not found", req.GetAssetId())
	}
	out, err := contributionsProto(page.Items)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.ListAssetContributionsResponse{Contributions: out, Pagination: pageOf(page)}, nil
}

// ListContributorContributions implements LedgerService.ListContributorContributions.
func (h *Handler) ListContributorContributions(ctx context.Context, req *ledgerv1.ListContributorContributionsRequest) (*ledgerv1.ListContributorContributionsResponse, error) {
	page, err := h.app.ListContributorContributions(ctx, req.GetContributorId(), usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, notFound(err, "contributor %q not found", req.GetContributorId())
	}
	out, err := contributionsProto(page.Items)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.ListContributorContributionsResponse{Contributions: out, Pagination: pageOf(page)}, nil
}

// CreateDistribution implements LedgerService.CreateDistribution.
func (h *Handler) CreateDistribution(ctx context.Context, req *ledgerv1.CreateDistributionRequest) (*ledgerv1.CreateDistributionResponse, error) {
	d, err := h.app.CreateDistribution(ctx, usecase.CreateDistributionCmd{
		AssetID: req.GetAssetId(), ValueAmount: req.GetValueAmount(), PayCC: req.GetPayCc(),
	})
	if err != nil {
		return nil, notFound(err, "asset %q not found", req.GetAssetId())
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	// The first page of payouts, as a read without a limit gives; the rest
	// is read back by pages (payout_count says how many there are).
	return &ledgerv1.CreateDistributionResponse{Distribution: distributionProto(d, attribution.DefaultPayoutPage, 0)}, nil
}

// GetDistribution implements LedgerService.GetDistribution.
func (h *Handler) GetDistribution(ctx context.Context, req *ledgerv1.GetDistributionRequest) (*ledgerv1.GetDistributionResponse, error) {
	d, err := h.app.GetDistribution(ctx, req.GetId(), usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, notFound(err, "distribution %q not found", req.GetId())
	}
	return &ledgerv1.GetDistributionResponse{Distribution: distributionProto(d.Distribution, d.Limit, d.Offset)}, nil
}

// ListAssetDistributions implements LedgerService.ListAssetDistributions.
func (h *Handler) ListAssetDistributions(ctx context.Context, req *ledgerv1.ListAssetDistributionsRequest) (*ledgerv1.ListAssetDistributionsResponse, error) {
	p, err := h.app.ListAssetDistributions(ctx, req.GetAssetId(), usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, notFound(err, "asset %q not found", req.GetAssetId())
	}
	out := make([]*ledgerv1.Distribution, 0, len(p.Distributions))
	for _, d := range p.Distributions {
		out = append(out, distributionProto(d, attribution.ListedPayouts, 0))
	}
	return &ledgerv1.ListAssetDistributionsResponse{
		Distributions: out,
		Pagination:    paging.Of(p.Limit, p.Offset, p.Total, len(p.Distributions), ""),
	}, nil
}

// pageOf is the one paging shape of a list the use cases read.
func pageOf[T any](l usecase.Listed[T]) *commonv1.Pagination {
	return paging.Of(l.Limit, l.Offset, l.Total, len(l.Items), l.Next)
}

// cursorPageOf is pageOf for the lists that page by cursor too (the audit
// log, incidents, contributions): has_more is whether a cursor follows.
func cursorPageOf[T any](l usecase.Listed[T]) *commonv1.Pagination {
	return paging.ByCursor(l.Limit, l.Offset, l.Total, len(l.Items), l.Next)
}

// ListContributions implements LedgerService.ListContributions.
func (h *Handler) ListContributions(ctx context.Context, req *ledgerv1.ListContributionsRequest) (*ledgerv1.ListContributionsResponse, error) {
	page, err := h.app.ListContributions(ctx, usecase.ListContributionsCmd{AssetID: req.GetAssetId(), ContributorID: req.GetContributorId(),
		Page: usecase.Page{Limit: req.Limit, Offset: req.GetOffset(), Cursor: req.GetCursor()}})
	if err != nil {
		return nil, err
	}
	out, err := contributionsProto(page.Items)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.ListContributionsResponse{Contributions: out, Pagination: cursorPageOf(page)}, nil
}

// ListContributors implements LedgerService.ListContributors.
func (h *Handler) ListContributors(ctx context.Context, req *ledgerv1.ListContributorsRequest) (*ledgerv1.ListContributorsResponse, error) {
	page, err := h.app.ListContributors(ctx, req.GetHandle(), usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.ListContributorsResponse{Contributors: make([]*ledgerv1.ContributorSummary, len(page.Items)), Pagination: pageOf(page)}
	for i, c := range page.Items {
		out.Contributors[i] = &ledgerv1.ContributorSummary{Id: c.ID, Handle: wire.OptString(c.Handle), TrustLevel: c.TrustLevel,
			CreatedAt: wire.Time(c.CreatedAt), AvailableCc: micros(c.Balances.Available), StakedCc: micros(c.Balances.Staked),
			CoolingCc: micros(c.Balances.Cooling)}
	}
	return out, nil
}
