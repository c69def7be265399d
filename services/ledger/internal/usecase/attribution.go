package usecase

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/github"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// MaxPaidPayouts bounds the payees of a distribution paid in CC: each is a
// journal entry and an audit entry in one transaction that holds the
// economy row.
const MaxPaidPayouts = 10_000

// CreateAssetCmd creates an asset, as the request named it.
type CreateAssetCmd struct {
	// Type is one of attribution.Types.
	Type        string
	Name        string
	Description string
}

// CreateAsset records a new asset with a total of zero; every bad field of
// the command is named at once (attribution.ValidateAsset).
func (a *App) CreateAsset(ctx context.Context, cmd CreateAssetCmd) (store.Asset, error) {
	if err := attribution.ValidateAsset(cmd.Type, cmd.Name, cmd.Description); err != nil {
		return store.Asset{}, err
	}
	as := store.Asset{ID: a.cfg.NewID(), Type: cmd.Type, Name: cmd.Name, Description: cmd.Description, CreatedAt: a.now()}
	if err := a.tx(ctx, func(r Repos) error { return r.Attribution.CreateAsset(ctx, as) }); err != nil {
		return store.Asset{}, wrap("create asset", err)
	}
	return as, nil
}

// GetAsset returns an asset. store.ErrNotFound when there is none.
func (a *App) GetAsset(ctx context.Context, id string) (store.Asset, error) {
	return a.read().Attribution.GetAsset(ctx, id)
}

// ListAssets returns a page of assets, newest first (attribution.PageLimit).
func (a *App) ListAssets(ctx context.Context, p Page) (Listed[store.Asset], error) {
	limit, offset, err := attribution.PageLimit(p.Limit, p.Offset)
	if err != nil {
		return Listed[store.Asset]{}, err
	}
	return listed(limit, offset, func(l, o int) ([]store.Asset, int, error) {
		return a.read().Attribution.ListAssets(ctx, l, o)
	})
}

// CreateContributionCmd records a contribution through the API, as the
// request gave it.
type CreateContributionCmd struct {
	// ContributorID is whom the contribution is for; the contributor is
	// created (trust attribution.TrustImplicit) when the ledger has none.
	ContributorID string
	AssetID       string
	// CostAmount is the request's cost_amount: nil when it left it out,
	// which is refused (a missing amount is not read as 0).
	CostAmount *float64
	// Metadata is the request's metadata object, kept as the claim: its
	// has_tests, has_docs and complexity must have their types, and are
	// never scored (a contributor does not grade its own work).
	Metadata map[string]any
	// ByOperator is true when an operator or the administrator records
	// it: the contribution is accepted at once. A contributor's own is a
	// claim until an operator reviews it (ReviewContribution).
	ByOperator bool
	// Refused is the handler's refusal of the request's Idempotency-Key,
	// answered once the fields are valid (validate.go).
	Refused error
}

// validate checks every field of the command at once and returns the
// cost it claims.
func (cmd CreateContributionCmd) validate() (money.Micros, error) {
	var (
		cost    money.Micros
		costErr error
	)
	if cmd.CostAmount == nil {
		costErr = fault.Validation(fault.Field("cost_amount", "is required"))
	} else {
		cost, costErr = attribution.Amount("cost_amount", *cmd.CostAmount)
	}
	_, scoreErr := attribution.Score(cmd.Metadata)
	err := collect(attribution.ValidateContributorID(cmd.ContributorID), required("asset_id", cmd.AssetID),
		costErr, scoreErr, attribution.CheckMetadata(cmd.Metadata))
	return cost, err
}

// CreateContribution records a contribution, creating its contributor when
// absent, and adds its cost to the asset's total, in one transaction: a
// contributor's own is claimed, an operator's accepted, and either scores
// the base coherence. An
// asset that does not exist is NotFound (nothing is written, not even the
// contributor); a total past attribution.MaxAssetTotal is Rejected.
//
// With an idempotency key it records the contribution at most once per
// key, as money movements do (idempotency.Runner.Do), and a retry answers
// the contribution the key recorded (nothing is written again). It takes
// no economy lock: contributions move no CC, and the key's primary key
// alone serializes concurrent retries, so contributions never queue behind
// money movements.
func (a *App) CreateContribution(ctx context.Context, cmd CreateContributionCmd, idem *idempotency.Request) (store.Contribution, error) {
	cost, err := cmd.validate()
	if err != nil {
		return store.Contribution{}, err
	}
	if cmd.Refused != nil {
		return store.Contribution{}, cmd.Refused
	}
	now := a.now()
	// The base score, whoever records it: coherence comes from evidence
	// (a delivery's files, a reviewer's answer), never from flags.
	c := store.Contribution{
		ID: a.cfg.NewID(), ContributorID: cmd.ContributorID, AssetID: cmd.AssetID, Cost: cost, ClaimedCost: cost,
		Coherence: attribution.CoherenceBase, Metadata: cmd.Metadata, Source: attribution.SourceAPI, CreatedAt: now,
		Status: attribution.StatusClaimed,
	}
	if cmd.ByOperator {
		c.Status = attribution.StatusAccepted
	}
	c, err = a.addContribution(ctx, c, store.Contributor{ID: c.ContributorID, TrustLevel: attribution.TrustImplicit, CreatedAt: now}, idem)
	if err != nil {
		return store.Contribution{}, contributionError(err, cmd.AssetID)
	}
	return c, nil
}

// addContribution records c and creates its contributor (as given) when
// absent, in one transaction, at most once per idempotency key: it answers
// c the first time and the original on a retry. store.ErrNotFound when the
// asset does not exist; store.ErrTotalTooLarge past the asset maximum.
func (a *App) addContribution(ctx context.Context, c store.Contribution, contributor store.Contributor, idem *idempotency.Request) (store.Contribution, error) {
	var out store.Contribution
	err := a.keyed.Do(ctx, idem, &out, nil, func(r Repos) error {
		// One trip that also ends the transaction: the asset's row lock,
		// which every contribution to the asset waits on, is held for no
		// round trip after it (on Postgres its COMMIT rides along). A
		// refusal changes nothing; why is read once the transaction is
		// over.
		added := c
		var b database.Batch
		if err := r.Attribution.QueueAddContribution(&b, &added, contributor); err != nil {
			return err
		}
		b.Final()
		if err := r.Send(ctx, &b); err != nil {
			return err
		}
		out = added
		return nil
	})
	if errors.Is(err, store.ErrRefused) {
		err = a.read().Attribution.ContributionRefusal(ctx, c.AssetID)
	}
	if err != nil {
		return store.Contribution{}, wrap("create contribution", err)
	}
	return out, nil
}

// contributionError maps the store's refusals of a contribution to asset
// (its id, or a GitHub repository's name).
func contributionError(err error, asset string) error {
	switch {
	case errors.Is(err, store.ErrTotalTooLarge):
		return fault.New(fault.Rejected, "asset %q total_cost would exceed %d", asset, attribution.MaxAssetTotal/money.Scale)
	case errors.Is(err, store.ErrNotFound):
		return fault.New(fault.NotFound, "asset %q not found", asset)
	}
	return err
}

// GetContribution returns a contribution. store.ErrNotFound when there is
// none.
func (a *App) GetContribution(ctx context.Context, id string) (store.Contribution, error) {
	return a.read().Attribution.GetContribution(ctx, id)
}

// ListAssetContributions returns a page of an asset's contributions by
// creation time, then id (attribution.ContributionPage).
// store.ErrNotFound when the asset does not exist.
func (a *App) ListAssetContributions(ctx context.Context, assetID string, p Page) (Listed[store.Contribution], error) {
	limit, offset, err := attribution.ContributionPage(p.Limit, p.Offset)
	if err != nil {
		return Listed[store.Contribution]{}, err
	}
	return listed(limit, offset, func(l, o int) ([]store.Contribution, int, error) {
		return a.read().Attribution.ListAssetContributions(ctx, assetID, l, o)
	})
}

// ListContributorContributions returns a page of a contributor's
// contributions by creation time, then id (attribution.ContributionPage).
// store.ErrNotFound when the contributor does not exist.
func (a *App) ListContributorContributions(ctx context.Context, contributorID string, p Page) (Listed[store.Contribution], error) {
	limit, offset, err := attribution.ContributionPage(p.Limit, p.Offset)
	if err != nil {
		return Listed[store.Contribution]{}, err
	}
	return listed(limit, offset, func(l, o int) ([]store.Contribution, int, error) {
		return a.read().Attribution.ListContributorContributions(ctx, contributorID, l, o)
	})
}

// GitHubDeliveryCmd is a GitHub push delivery whose signature the handler
// verified: its X-GitHub-Delivery header (empty when it had none) and its
// raw body, a GitHub push payload or Foundry's shaped body (github.Decode).
type GitHubDeliveryCmd struct {
	DeliveryID string
	Body       []byte
	// Signed is true when the delivery's signature was verified with the
	// webhook secret: its contribution is verified by it. An unsigned one
	// (accepted only with -github-allow-unsigned) is a claim.
	Signed bool
}

// GitHubDelivery is what a push delivery did.
type GitHubDelivery struct {
	// Ignored, when not empty, says why the push records nothing (it has
	// no new commits); nothing else is set then.
	Ignored string
	// Push is the delivery as decoded.
	Push github.Push
	// Contribution is the contribution recorded, or on a redelivery
	// (Duplicate) the one recorded the first time.
	Contribution store.Contribution
	Duplicate    bool
}

// RecordGitHubDelivery records a push delivery once: it checks the
// delivery id, decodes the body, checks the push can be recognised when
// delivered again (by its delivery id, its repository and commit, and its
// body) and
// that its metadata scores, then records the contribution, creating the
// contributor (trust attribution.TrustGitHub) and the repository's asset
// when absent. A redelivery records nothing and answers the original.
func (a *App) RecordGitHubDelivery(ctx context.Context, cmd GitHubDeliveryCmd) (GitHubDelivery, error) {
	if err := github.ValidateDeliveryID(cmd.DeliveryID); err != nil {
		return GitHubDelivery{}, err
	}
	push, err := github.Decode(cmd.Body)
	if ig, ok := github.IsIgnored(err); ok {
		return GitHubDelivery{Ignored: ig.Detail}, nil
	}
	if err != nil {
		return GitHubDelivery{}, err
	}
	if err := push.CheckRedeliveryKey(cmd.DeliveryID); err != nil {
		return GitHubDelivery{}, err
	}
	coherence, scoreErr := attribution.Score(push.Metadata)
	if err := collect(scoreErr, attribution.CheckMetadata(push.Metadata)); err != nil {
		return GitHubDelivery{}, err
	}
	if push.Shaped {
		// A shaped body's flags are its sender's claim, not what Foundry
		// read from the delivery's files: the base score.
		coherence = attribution.CoherenceBase
	}
	status := attribution.StatusClaimed
	if cmd.Signed {
		status = attribution.StatusVerified
	}
	now := a.now()
	contributor := store.Contributor{ID: push.ContributorID(), TrustLevel: attribution.TrustGitHub, CreatedAt: now}
	g := store.GitHubContribution{
		DeliveryID:  cmd.DeliveryID,
		CommitHash:  push.CommitKey(),
		BodySHA256:  bodyHash(cmd.Body),
		Contributor: contributor,
		Asset: store.Asset{
			ID: a.cfg.NewID(), Type: attribution.TypeCode, Name: push.Repository,
			Description: "GitHub repository " + push.Repository, GitHubRepository: push.RepositoryKey(), CreatedAt: now,
		},
		Contribution: store.Contribution{
			ID: a.cfg.NewID(), ContributorID: contributor.ID, Cost: push.EstimatedCost(), ClaimedCost: push.EstimatedCost(),
			Coherence: coherence, Status: status, Metadata: push.RecordedMetadata(cmd.DeliveryID), Source: attribution.SourceGitHub,
			CreatedAt: now,
		},
	}
	c, duplicate, err := a.recordGitHub(ctx, g)
	if err != nil {
		return GitHubDelivery{}, contributionError(err, push.Repository)
	}
	return GitHubDelivery{Push: push, Contribution: c, Duplicate: duplicate}, nil
}

// bodyHash is the hex SHA-256 of a delivery's raw body, its key as a
// repeat whatever its delivery id.
func bodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// recordGitHub records a push delivery once: it creates the contributor
// and the repository's asset when absent and records the contribution, all
// in one transaction. A delivery id, a repository and commit, or a body
// seen before (also concurrently: a unique key decides) records nothing and returns the original contribution with
// duplicate true. The original is read after the transaction rolled back:
// on Postgres the failed claim aborted it.
func (a *App) recordGitHub(ctx context.Context, g store.GitHubContribution) (c store.Contribution, duplicate bool, err error) {
	err = a.tx(ctx, func(r Repos) error {
		var err error
		c, err = r.Attribution.RecordGitHubContribution(ctx, g)
		return err
	})
	if errors.Is(err, store.ErrAlreadyExists) {
		orig, err := a.read().Attribution.DeliveryContribution(ctx, g)
		if err != nil {
			return store.Contribution{}, false, err
		}
		return orig, true, nil
	}
	if err != nil {
		return store.Contribution{}, false, err
	}
	return c, false, nil
}

// CreateDistributionCmd distributes a value over an asset's contributors,
// as the request gave it.
type CreateDistributionCmd struct {
	AssetID string
	// ValueAmount is the request's value_amount (attribution.Amount).
	ValueAmount float64
	// PayCC mints each payout as CC (an administrator's choice; see
	// createDistribution).
	PayCC bool
}

// validate checks every field of the command at once and returns the value
// it asks to distribute.
func (cmd CreateDistributionCmd) validate() (money.Micros, error) {
	value, valueErr := attribution.Amount("value_amount", cmd.ValueAmount)
	if err := collect(required("asset_id", cmd.AssetID), valueErr); err != nil {
		return 0, err
	}
	return value, nil
}

// CreateDistribution checks the whole command (one fault.Validation naming
// every bad field) and records the distribution with a new id, now
// (createDistribution). store.ErrNotFound when the asset does not exist.
func (a *App) CreateDistribution(ctx context.Context, cmd CreateDistributionCmd) (store.Distribution, error) {
	value, err := cmd.validate()
	if err != nil {
		return store.Distribution{}, err
	}
	return a.createDistribution(ctx, store.Distribution{
		ID: a.cfg.NewID(), AssetID: cmd.AssetID, Value: value, CreatedAt: a.now(), PaidCC: cmd.PayCC,
	})
}

// createDistribution records a distribution of d.Value over asset
// d.AssetID in one transaction: it reads the asset's stakes (summed cost
// per contributor and coherence), splits the value with attribution.Split
// and records the result, so the payouts match the contributions they were
// computed from. d.Payouts and d.PayoutCount are ignored; the result
// carries every payout. store.ErrNotFound when the asset does not exist.
//
// Rejected contributions weigh nothing; claims weigh only when the
// distribution is not paid in CC (docs/ledger.md, "Contributions: claims
// and evidence").
//
// With d.PaidCC (an administrator's choice) each payout is also minted as
// CC into the payee's available balance, through the one movement function
// and in the same transaction, so the distribution, its CC and their audit
// entries commit together; the backing invariant applies as to every
// movement (the treasury must already hold the USD, typically the spread
// it kept), and a frozen or read-only economy refuses it.
func (a *App) createDistribution(ctx context.Context, d store.Distribution) (store.Distribution, error) {
	err := a.tx(ctx, func(r Repos) error {
		var (
			eco  store.Economy
			rate Rate
			err  error
		)
		if d.PaidCC {
			// Minting: the mode lock and the economy row first, as every
			// movement of supply takes them.
			if eco, rate, err = a.lockSupply(ctx, r); err != nil {
				return err
			}
		}
		// Paid in CC, which can be withdrawn as USD, only what evidence or
		// an operator's review backs is weighed; an unpaid split weighs the
		// claims too and marks their part.
		stakes, err := r.Attribution.AssetStakes(ctx, d.AssetID, d.PaidCC)
		if err != nil {
			return err
		}
		d.Payouts = attribution.Split(d.Value, stakes)
		if d.Payouts == nil {
			d.Payouts = []attribution.Payout{}
		}
		d.PayoutCount = len(d.Payouts)
		if d.PaidCC && d.PayoutCount > MaxPaidPayouts {
			return fault.New(fault.Rejected, "a distribution paid in CC may have at most %d payees; this one has %d", MaxPaidPayouts, d.PayoutCount)
		}
		if d.PaidCC {
			if err := a.markUnpaid(ctx, r, d.Payouts); err != nil {
				return err
			}
		}
		if err := r.Attribution.InsertDistribution(ctx, d); err != nil {
			return err
		}
		if !d.PaidCC {
			return nil
		}
		for _, p := range d.Payouts {
			if p.Amount <= 0 || p.Unpaid {
				continue
			}
			if _, _, err := a.move(ctx, r, &eco, rate, movement{
				entry:       credit.Transfer(credit.KindDistribution, credit.Issuance, credit.Available(p.ContributorID), p.Amount),
				contributor: p.ContributorID, amount: p.Amount, mint: p.Amount, actor: "admin",
				attrs: map[string]string{"distribution_id": d.ID, "asset_id": d.AssetID},
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return store.Distribution{}, fmt.Errorf("create distribution of asset %s: %w", d.AssetID, err)
	}
	if d.PayoutCount > 0 {
		// The answer names the payees of its first page by handle: read
		// them back as a GET would (the split knows ids only).
		page, err := a.read().Attribution.GetDistribution(ctx, d.ID, attribution.DefaultPayoutPage, 0)
		if err != nil {
			return store.Distribution{}, fmt.Errorf("read distribution %s back: %w", d.ID, err)
		}
		d.Handles = page.Handles
	}
	return d, nil
}

// markUnpaid marks the payouts of a distribution paid in CC whose payee
// never registered (an implicit id, github:octo or email:…, first named by
// a contribution): CC minted to it could never move, since only the
// contributor's own session moves CC, and would sit outstanding for good.
// Such a payout keeps its share, recorded and shown (unpaid), and nothing
// is minted for it.
func (a *App) markUnpaid(ctx context.Context, r Repos, payouts []attribution.Payout) error {
	ids := make([]string, len(payouts))
	for i, p := range payouts {
		ids[i] = p.ContributorID
	}
	registered, err := r.Identity.Registered(ctx, ids)
	if err != nil {
		return err
	}
	for i := range payouts {
		payouts[i].Unpaid = !registered[payouts[i].ContributorID]
	}
	return nil
}

// PayoutPage is a distribution with one page of its payouts: Limit and
// Offset are the page's bounds, the defaults applied (the distribution's
// PayoutCount counts them all).
type PayoutPage struct {
	store.Distribution
	Limit, Offset int
}

// GetDistribution returns a distribution with a page of its payouts (in
// their order; attribution.PayoutPage) and their count. store.ErrNotFound
// when there is none.
func (a *App) GetDistribution(ctx context.Context, id string, p Page) (PayoutPage, error) {
	limit, offset, err := attribution.PayoutPage(p.Limit, p.Offset)
	if err != nil {
		return PayoutPage{}, err
	}
	d, err := a.read().Attribution.GetDistribution(ctx, id, limit, offset)
	if err != nil {
		return PayoutPage{}, err
	}
	return PayoutPage{Distribution: d, Limit: limit, Offset: offset}, nil
}

// DistributionPage is a page of an asset's distributions.
type DistributionPage struct {
	// Distributions carry their first attribution.ListedPayouts payouts
	// and the count of all.
	Distributions []store.Distribution
	// Limit and Offset are the page's, defaults applied; Total counts the
	// asset's distributions.
	Limit, Offset, Total int
}

// ListAssetDistributions returns a page of an asset's distributions by
// creation time, then id (attribution.DistributionPage). store.ErrNotFound
// when the asset does not exist.
func (a *App) ListAssetDistributions(ctx context.Context, assetID string, p Page) (DistributionPage, error) {
	limit, offset, err := attribution.DistributionPage(p.Limit, p.Offset)
	if err != nil {
		return DistributionPage{}, err
	}
	ds, total, err := a.read().Attribution.ListAssetDistributions(ctx, assetID, limit, offset, attribution.ListedPayouts)
	if err != nil {
		return DistributionPage{}, err
	}
	return DistributionPage{Distributions: ds, Limit: limit, Offset: offset, Total: total}, nil
}

// ReviewContributionCmd is an operator's review of a claimed
// contribution.
type ReviewContributionCmd struct {
	ID string
	// Verdict is attribution.VerdictAccept or VerdictReject.
	Verdict string
	// CostAmount and CoherenceScore, for an accept, correct the cost
	// (the claim's stays when nil) and give the reviewer's score (the
	// base score when nil).
	CostAmount     *float64
	CoherenceScore *float64
	Reason         string
	Actor          string
}

// validate checks every field at once and returns the review it asks for
// (its cost left zero when the claim's stays).
func (cmd ReviewContributionCmd) validate() (store.Review, bool, error) {
	r := store.Review{Coherence: attribution.CoherenceBase, Reason: cmd.Reason, By: cmd.Actor}
	errs := []error{required("id", cmd.ID), credit.Text("reason", cmd.Reason, true)}
	keepCost := cmd.CostAmount == nil
	switch cmd.Verdict {
	case attribution.VerdictAccept:
		r.Status = attribution.StatusAccepted
		if cmd.CostAmount != nil {
			var err error
			r.Cost, err = attribution.Amount("cost_amount", *cmd.CostAmount)
			errs = append(errs, err)
		}
		if cmd.CoherenceScore != nil {
			var err error
			r.Coherence, err = attribution.ParseCoherence("coherence_score", *cmd.CoherenceScore)
			errs = append(errs, err)
		}
	case attribution.VerdictReject:
		r.Status = attribution.StatusRejected
		if cmd.CostAmount != nil || cmd.CoherenceScore != nil {
			errs = append(errs, fault.Validation(fault.Field("cost_amount", "and coherence_score are for an accepted claim; a rejected one weighs nothing")))
		}
	case "":
		errs = append(errs, fault.Validation(fault.Field("verdict", "is required: accept or reject")))
	default:
		errs = append(errs, fault.Validation(fault.Field("verdict", "must be accept or reject")))
	}
	return r, keepCost, collect(errs...)
}

// ReviewContribution applies an operator's review to a claimed
// contribution, once: accepted, it weighs its (corrected) cost at the
// reviewer's score in every distribution, one paid in CC included;
// rejected, it weighs nothing and leaves its asset's total. A
// contribution that is no claim (already reviewed, recorded by an
// operator, verified by a signed delivery) is a conflict; an unknown one
// NotFound.
func (a *App) ReviewContribution(ctx context.Context, cmd ReviewContributionCmd) (store.Contribution, error) {
	review, keepCost, err := cmd.validate()
	if err != nil {
		return store.Contribution{}, err
	}
	var out store.Contribution
	err = a.tx(ctx, func(r Repos) error {
		c, err := r.Attribution.GetContribution(ctx, cmd.ID)
		if errors.Is(err, store.ErrNotFound) {
			return fault.New(fault.NotFound, "contribution %s not found", cmd.ID)
		}
		if err != nil {
			return err
		}
		if c.Status != attribution.StatusClaimed {
			return fault.New(fault.Conflict, "contribution %s is %s: only a claim is reviewed, and once", cmd.ID, c.Status)
		}
		if keepCost || review.Status == attribution.StatusRejected {
			review.Cost = c.Cost
		}
		review.At = a.now()
		out, err = r.Attribution.ReviewContribution(ctx, c, review)
		if errors.Is(err, store.ErrAlreadyExists) {
			return fault.New(fault.Conflict, "contribution %s was reviewed meanwhile: only a claim is reviewed, and once", cmd.ID)
		}
		return err
	})
	return out, err
}
