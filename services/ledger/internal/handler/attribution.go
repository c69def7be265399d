package handler

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/structpb"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

func assetProto(a store.Asset) *ledgerv1.Asset {
	return &ledgerv1.Asset{
		Id: a.ID, Type: a.Type, Name: a.Name, Description: a.Description,
		TotalCost: a.TotalCost.Float64(), ContributionCount: int32(a.ContributionCount), CreatedAt: wire.Time(a.CreatedAt),
	}
}

func contributionProto(c store.Contribution) (*ledgerv1.Contribution, error) {
	meta, err := structpb.NewStruct(c.Metadata)
	if err != nil {
		return nil, fmt.Errorf("contribution %s metadata: %w", c.ID, err)
	}
	return &ledgerv1.Contribution{
		Id: c.ID, ContributorId: c.ContributorID, AssetId: c.AssetID, CostAmount: c.Cost.Float64(),
		CoherenceScore: c.Coherence.Float64(), Metadata: meta, Source: c.Source, CreatedAt: wire.Time(c.CreatedAt),
	}, nil
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

// distributionProto renders d with at most maxPayouts of its payouts (all
// it holds when maxPayouts is negative).
func distributionProto(d store.Distribution, maxPayouts int) *ledgerv1.Distribution {
	shown := d.Payouts
	if maxPayouts >= 0 && len(shown) > maxPayouts {
		shown = shown[:maxPayouts]
	}
	payouts := make([]*ledgerv1.Payout, 0, len(shown))
	for _, p := range shown {
		payouts = append(payouts, &ledgerv1.Payout{ContributorId: p.ContributorID, Amount: p.Amount.Float64()})
	}
	return &ledgerv1.Distribution{
		Id: d.ID, AssetId: d.AssetID, ValueAmount: d.Value.Float64(), Payouts: payouts, CreatedAt: wire.Time(d.CreatedAt),
		PayoutCount: int32(d.PayoutCount), PaidCc: d.PaidCC,
	}
}

// collect merges validation failures into one, so a request learns every
// bad field at once; a non-validation error wins as it is.
func collect(errs ...error) error {
	var fields []fault.FieldError
	for _, err := range errs {
		if err == nil {
			continue
		}
		fe, ok := fault.As(err)
		if !ok || fe.Kind != fault.Invalid {
			return err
		}
		fields = append(fields, fe.Fields...)
	}
	if len(fields) == 0 {
		return nil
	}
	return fault.Validation(fields...)
}

func required(field, value string) error {
	if value == "" {
		return fault.Validation(fault.Field(field, "is required"))
	}
	return nil
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
	if err := attribution.ValidateAsset(req.GetType(), req.GetName(), req.GetDescription()); err != nil {
		return nil, err
	}
	a := store.Asset{ID: uuid.NewString(), Type: req.GetType(), Name: req.GetName(), Description: req.GetDescription(), CreatedAt: h.now()}
	if err := h.app.CreateAsset(ctx, a); err != nil {
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
	limit, offset, err := attribution.PageLimit(req.Limit, req.GetOffset())
	if err != nil {
		return nil, err
	}
	assets, err := h.app.ListAssets(ctx, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]*ledgerv1.Asset, 0, len(assets))
	for _, a := range assets {
		out = append(out, assetProto(a))
	}
	return &ledgerv1.ListAssetsResponse{Assets: out}, nil
}

// CreateContribution implements LedgerService.CreateContribution.
func (h *Handler) CreateContribution(ctx context.Context, req *ledgerv1.CreateContributionRequest) (*ledgerv1.CreateContributionResponse, error) {
	meta := req.GetMetadata().AsMap()
	cost, costErr := attribution.Amount("cost_amount", req.GetCostAmount())
	if req.CostAmount == nil {
		// Required by the contract: a missing amount is not read as 0.
		costErr = fault.Validation(fault.Field("cost_amount", "is required"))
	}
	coherence, scoreErr := attribution.Score(meta)
	if err := collect(
		attribution.ValidateContributorID(req.GetContributorId()),
		required("asset_id", req.GetAssetId()),
		costErr, scoreErr, attribution.CheckMetadata(meta),
	); err != nil {
		return nil, err
	}
	now := h.now()
	c := store.Contribution{
		ID: uuid.NewString(), ContributorID: req.GetContributorId(), AssetID: req.GetAssetId(), Cost: cost,
		Coherence: coherence, Metadata: meta, Source: attribution.SourceAPI, CreatedAt: now,
	}
	// The key is scoped by the contributor the contribution is for (a
	// contributor's own, or any an operator names): two contributors' keys
	// never collide. A retry answers the first response, with its status
	// (201).
	key, err := idempotency.FromContext(ctx, "contribution", c.ContributorID, req)
	if err != nil {
		return nil, err
	}
	c, err = h.app.CreateContribution(ctx, c, store.Contributor{ID: c.ContributorID, TrustLevel: attribution.TrustImplicit, CreatedAt: now}, key)
	if err != nil {
		return nil, contributionError(err, req.GetAssetId())
	}
	out, err := contributionProto(c)
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &ledgerv1.CreateContributionResponse{Contribution: out}, nil
}

// contributionError maps the store's refusals of a contribution.
func contributionError(err error, assetID string) error {
	if errors.Is(err, store.ErrTotalTooLarge) {
		return fault.New(fault.Rejected, "asset %q total_cost would exceed %d", assetID, attribution.MaxAssetTotal/money.Scale)
	}
	return notFound(err, "asset %q not found", assetID)
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
	limit, offset, err := attribution.ContributionPage(req.Limit, req.GetOffset())
	if err != nil {
		return nil, err
	}
	cs, err := h.app.ListAssetContributions(ctx, req.GetAssetId(), limit, offset)
	if err != nil {
		return nil, notFound(err, "asset %q not found", req.GetAssetId())
	}
	out, err := contributionsProto(cs)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.ListAssetContributionsResponse{Contributions: out}, nil
}

// ListContributorContributions implements LedgerService.ListContributorContributions.
func (h *Handler) ListContributorContributions(ctx context.Context, req *ledgerv1.ListContributorContributionsRequest) (*ledgerv1.ListContributorContributionsResponse, error) {
	limit, offset, err := attribution.ContributionPage(req.Limit, req.GetOffset())
	if err != nil {
		return nil, err
	}
	cs, err := h.app.ListContributorContributions(ctx, req.GetContributorId(), limit, offset)
	if err != nil {
		return nil, notFound(err, "contributor %q not found", req.GetContributorId())
	}
	out, err := contributionsProto(cs)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.ListContributorContributionsResponse{Contributions: out}, nil
}

// CreateDistribution implements LedgerService.CreateDistribution.
func (h *Handler) CreateDistribution(ctx context.Context, req *ledgerv1.CreateDistributionRequest) (*ledgerv1.CreateDistributionResponse, error) {
	value, valueErr := attribution.Amount("value_amount", req.GetValueAmount())
	if err := collect(required("asset_id", req.GetAssetId()), valueErr); err != nil {
		return nil, err
	}
	d := store.Distribution{ID: uuid.NewString(), AssetID: req.GetAssetId(), Value: value, CreatedAt: h.now(), PaidCC: req.GetPayCc()}
	d, err := h.app.CreateDistribution(ctx, d)
	if err != nil {
		return nil, notFound(err, "asset %q not found", req.GetAssetId())
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	// The first page of payouts, as a read without a limit gives; the rest
	// is read back by pages (payout_count says how many there are).
	return &ledgerv1.CreateDistributionResponse{Distribution: distributionProto(d, attribution.DefaultPayoutPage)}, nil
}

// GetDistribution implements LedgerService.GetDistribution.
func (h *Handler) GetDistribution(ctx context.Context, req *ledgerv1.GetDistributionRequest) (*ledgerv1.GetDistributionResponse, error) {
	limit, offset, err := attribution.PayoutPage(req.Limit, req.GetOffset())
	if err != nil {
		return nil, err
	}
	d, err := h.app.GetDistribution(ctx, req.GetId(), limit, offset)
	if err != nil {
		return nil, notFound(err, "distribution %q not found", req.GetId())
	}
	return &ledgerv1.GetDistributionResponse{Distribution: distributionProto(d, -1)}, nil
}

// ListAssetDistributions implements LedgerService.ListAssetDistributions.
func (h *Handler) ListAssetDistributions(ctx context.Context, req *ledgerv1.ListAssetDistributionsRequest) (*ledgerv1.ListAssetDistributionsResponse, error) {
	limit, offset, err := attribution.DistributionPage(req.Limit, req.GetOffset())
	if err != nil {
		return nil, err
	}
	ds, total, err := h.app.ListAssetDistributions(ctx, req.GetAssetId(), limit, offset, attribution.ListedPayouts)
	if err != nil {
		return nil, notFound(err, "asset %q not found", req.GetAssetId())
	}
	out := make([]*ledgerv1.Distribution, 0, len(ds))
	for _, d := range ds {
		out = append(out, distributionProto(d, -1))
	}
	return &ledgerv1.ListAssetDistributionsResponse{
		Distributions: out,
		Pagination: &ledgerv1.Pagination{
			Limit: int32(limit), Offset: int32(offset), Total: int32(total), HasMore: offset+len(ds) < total,
		},
	}, nil
}
