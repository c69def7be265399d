package handler

import (
	"context"
	"fmt"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/github"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
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
// verifies the signature over the raw body before anything else (who sent
// the delivery) and answers the events that record nothing; the use case
// reads the push and records it once per X-GitHub-Delivery or, for a
// delivery without the header, once per repository and commit.
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
	// Verify passed: with a secret configured the delivery is signed,
	// without one (-github-allow-unsigned) nothing vouches for it.
	d, err := h.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: deliveryID, Body: req.GetBody(),
		Signed: h.webhook.Required()})
	if err != nil {
		return nil, err
	}
	if d.Ignored != "" {
		return &ledgerv1.RecordGithubDeliveryResponse{Status: deliveryIgnored, Detail: d.Ignored}, nil
	}
	out, err := contributionProto(d.Contribution)
	if err != nil {
		return nil, err
	}
	if d.Duplicate {
		what := "delivery " + deliveryID
		if deliveryID == "" {
			what = "commit " + d.Push.CommitHash + " of " + d.Push.Repository
		}
		return &ledgerv1.RecordGithubDeliveryResponse{
			Status: deliveryDuplicate, Contribution: out, Detail: what + " was recorded before: nothing new recorded",
		}, nil
	}
	return &ledgerv1.RecordGithubDeliveryResponse{Status: deliveryRecorded, Contribution: out}, nil
}
