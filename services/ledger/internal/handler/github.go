package handler

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/github"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// What a delivery did (RecordGithubDeliveryResponse.status); the gateway
// maps each to an HTTP status.
const (
	deliveryRecorded  = "recorded"  // 201 with the new contribution
	deliveryDuplicate = "duplicate" // 200 with the original contribution
	deliveryPong      = "pong"      // 200
	deliveryIgnored   = "ignored"   // 202
)

// maxEventShown bounds how much of an unknown event name a reply echoes.
const maxEventShown = 64

// RecordGithubDelivery implements LedgerService.RecordGithubDelivery: it
// verifies the signature over the raw body before anything else, then
// records a push once per X-GitHub-Delivery or, for a delivery without the
// header, once per repository and commit.
func (h *Handler) RecordGithubDelivery(ctx context.Context, req *ledgerv1.RecordGithubDeliveryRequest) (*ledgerv1.RecordGithubDeliveryResponse, error) {
	if err := h.webhook.Verify(req.GetBody(), req.GetSignature_256()); err != nil {
		return nil, err
	}
	switch event := req.GetEvent(); event {
	case github.EventPing:
		return &ledgerv1.RecordGithubDeliveryResponse{Status: deliveryPong, Detail: "pong: the webhook reaches Foundry; nothing recorded"}, nil
	case github.EventPush, "":
		// A push; without the header, the shaped body sent by a script.
	default:
		if len(event) > maxEventShown {
			event = event[:maxEventShown] + "…"
		}
		return &ledgerv1.RecordGithubDeliveryResponse{
			Status: deliveryIgnored, Detail: fmt.Sprintf("event %q is not recorded: only push deliveries make contributions", event),
		}, nil
	}
	deliveryID := req.GetDeliveryId()
	if err := github.ValidateDeliveryID(deliveryID); err != nil {
		return nil, err
	}
	push, err := github.Decode(req.GetBody())
	if ig, ok := github.IsIgnored(err); ok {
		return &ledgerv1.RecordGithubDeliveryResponse{Status: deliveryIgnored, Detail: ig.Detail}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := push.CheckRedeliveryKey(deliveryID); err != nil {
		return nil, err
	}
	coherence, scoreErr := attribution.Score(push.Metadata)
	if err := collect(scoreErr, attribution.CheckMetadata(push.Metadata)); err != nil {
		return nil, err
	}

	now := h.now()
	contributor := store.Contributor{ID: push.ContributorID(), TrustLevel: attribution.TrustGitHub, CreatedAt: now}
	g := store.GitHubContribution{
		DeliveryID:  deliveryID,
		CommitHash:  push.CommitKey(),
		Contributor: contributor,
		Asset: store.Asset{
			ID: uuid.NewString(), Type: attribution.TypeCode, Name: push.Repository,
			Description: "GitHub repository " + push.Repository, GitHubRepository: push.RepositoryKey(), CreatedAt: now,
		},
		Contribution: store.Contribution{
			ID: uuid.NewString(), ContributorID: contributor.ID, Cost: push.EstimatedCost(), Coherence: coherence,
			Metadata: push.RecordedMetadata(deliveryID), Source: attribution.SourceGitHub, CreatedAt: now,
		},
	}
	c, duplicate, err := h.app.RecordGitHubContribution(ctx, g)
	if err != nil {
		return nil, contributionError(err, push.Repository)
	}
	out, err := contributionProto(c)
	if err != nil {
		return nil, err
	}
	if duplicate {
		what := "delivery " + deliveryID
		if deliveryID == "" {
			what = "commit " + push.CommitHash + " of " + push.Repository
		}
		return &ledgerv1.RecordGithubDeliveryResponse{
			Status: deliveryDuplicate, Contribution: out, Detail: what + " was recorded before: nothing new recorded",
		}, nil
	}
	return &ledgerv1.RecordGithubDeliveryResponse{Status: deliveryRecorded, Contribution: out}, nil
}
