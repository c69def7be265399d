package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// MaxPaidPayouts bounds the payees of a distribution paid in CC: each is a
// journal entry and an audit entry in one transaction that holds the
// economy row.
const MaxPaidPayouts = 10_000

// CreateAsset records a new asset (its total and count are ignored: they
// start at zero). store.ErrAlreadyExists when the id or the GitHub
// repository is taken.
func (a *App) CreateAsset(ctx context.Context, as store.Asset) error {
	return a.tx(ctx, func(r Repos) error { return r.Attribution.CreateAsset(ctx, as) })
}

// GetAsset returns an asset. store.ErrNotFound when there is none.
func (a *App) GetAsset(ctx context.Context, id string) (store.Asset, error) {
	return a.read().Attribution.GetAsset(ctx, id)
}

// ListAssets returns a page of assets, newest first.
func (a *App) ListAssets(ctx context.Context, limit, offset int) ([]store.Asset, error) {
	return a.read().Attribution.ListAssets(ctx, limit, offset)
}

// CreateContribution records c, creating its contributor (as given) when
// absent, and adds its cost to the asset's total, in one transaction.
// store.ErrNotFound when the asset does not exist (nothing is written, not
// even the contributor); store.ErrTotalTooLarge past the asset maximum.
//
// With an idempotency key it records c at most once per key, as money
// movements do (idempotency.Runner.Do), and returns the contribution the key
// recorded: c the first time, the original on a retry (nothing is written
// again). It takes no economy lock: contributions move no CC, and the
// key's primary key alone serializes concurrent retries, so contributions
// never queue behind money movements.
func (a *App) CreateContribution(ctx context.Context, c store.Contribution, contributor store.Contributor, idem *idempotency.Request) (store.Contribution, error) {
	var out store.Contribution
	err := a.keyed.Do(ctx, idem, &out, nil, func(r Repos) error {
		if err := r.Identity.EnsureContributor(ctx, contributor); err != nil {
			return err
		}
		if err := r.Attribution.AddContribution(ctx, c); err != nil {
			return err
		}
		out = c
		return nil
	})
	if err != nil {
		return store.Contribution{}, wrap("create contribution", err)
	}
	return out, nil
}

// GetContribution returns a contribution. store.ErrNotFound when there is
// none.
func (a *App) GetContribution(ctx context.Context, id string) (store.Contribution, error) {
	return a.read().Attribution.GetContribution(ctx, id)
}

// ListAssetContributions returns a page of an asset's contributions by
// creation time, then id. store.ErrNotFound when the asset does not exist.
func (a *App) ListAssetContributions(ctx context.Context, assetID string, limit, offset int) ([]store.Contribution, error) {
	return a.read().Attribution.ListAssetContributions(ctx, assetID, limit, offset)
}

// ListContributorContributions returns a page of a contributor's
// contributions by creation time, then id. store.ErrNotFound when the
// contributor does not exist.
func (a *App) ListContributorContributions(ctx context.Context, contributorID string, limit, offset int) ([]store.Contribution, error) {
	return a.read().Attribution.ListContributorContributions(ctx, contributorID, limit, offset)
}

// RecordGitHubContribution records a push delivery once: it creates the
// contributor and the repository's asset when absent and records the
// contribution, all in one transaction. A delivery id seen before, or for a
// delivery without one the repository and commit hash (also concurrently:
// a unique key decides), records nothing and returns the original
// contribution with duplicate true. The original is read after the
// transaction rolled back: on Postgres the failed claim aborted it.
func (a *App) RecordGitHubContribution(ctx context.Context, g store.GitHubContribution) (c store.Contribution, duplicate bool, err error) {
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

// CreateDistribution records a distribution of d.Value over asset
// d.AssetID in one transaction: it reads the asset's stakes (summed cost
// per contributor and coherence), splits the value with attribution.Split
// and records the result, so the payouts match the contributions they were
// computed from. d.Payouts and d.PayoutCount are ignored; the result
// carries every payout. store.ErrNotFound when the asset does not exist.
//
// With d.PaidCC (an administrator's choice) each payout is also minted as
// CC into the payee's available balance, through the one movement function
// and in the same transaction, so the distribution, its CC and their audit
// entries commit together; the backing invariant applies as to every
// movement (the treasury must already hold the USD, typically the spread
// it kept), and a frozen or read-only economy refuses it.
func (a *App) CreateDistribution(ctx context.Context, d store.Distribution) (store.Distribution, error) {
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
		stakes, err := r.Attribution.AssetStakes(ctx, d.AssetID)
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
		if err := r.Attribution.InsertDistribution(ctx, d); err != nil {
			return err
		}
		if !d.PaidCC {
			return nil
		}
		for _, p := range d.Payouts {
			if p.Amount <= 0 {
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
	return d, nil
}

// GetDistribution returns a distribution with a page of its payouts (in
// their order) and their count. store.ErrNotFound when there is none.
func (a *App) GetDistribution(ctx context.Context, id string, limit, offset int) (store.Distribution, error) {
	return a.read().Attribution.GetDistribution(ctx, id, limit, offset)
}

// ListAssetDistributions returns a page of an asset's distributions by
// creation time, then id, each with its first payouts payouts and their
// count, and the number of the asset's distributions. store.ErrNotFound
// when the asset does not exist.
func (a *App) ListAssetDistributions(ctx context.Context, assetID string, limit, offset, payouts int) ([]store.Distribution, int, error) {
	return a.read().Attribution.ListAssetDistributions(ctx, assetID, limit, offset, payouts)
}
