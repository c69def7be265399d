package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

var base = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

func newAsset(typ string, at time.Time) store.Asset {
	return store.Asset{ID: uuid.NewString(), Type: typ, Name: "asset " + typ, Description: "d", CreatedAt: at}
}

// NewContribution is an API contribution of cost by contributorID to assetID.
func NewContribution(contributorID, assetID string, cost money.Micros, at time.Time) store.Contribution {
	return store.Contribution{
		ID: uuid.NewString(), ContributorID: contributorID, AssetID: assetID, Cost: cost,
		Coherence: attribution.CoherenceBase, Metadata: map[string]any{}, Source: attribution.SourceAPI, CreatedAt: at,
		Status: attribution.StatusAccepted, ClaimedCost: cost,
	}
}

// Implicit is a contributor created by a contribution (no handle).
func Implicit(id string, at time.Time) store.Contributor {
	return store.Contributor{ID: id, TrustLevel: attribution.TrustImplicit, CreatedAt: at}
}

// add records c by an implicit contributor in one transaction, as the
// contribution use case does: ensure the contributor, then add.
func add(h Harness, c store.Contribution, at time.Time) error {
	ctx := context.Background()
	return h.write(func(r repos) error {
		_, err := r.attribution.AddContribution(ctx, c, Implicit(c.ContributorID, at))
		return err
	})
}

// contribute records a contribution by an implicit contributor.
func contribute(t *testing.T, h Harness, contributorID, assetID string, cost money.Micros, at time.Time) store.Contribution {
	t.Helper()
	c := NewContribution(contributorID, assetID, cost, at)
	require.NoError(t, add(h, c, at))
	return c
}

func createAsset(t *testing.T, h Harness, at time.Time) store.Asset {
	t.Helper()
	a := newAsset(attribution.TypeCode, at)
	require.NoError(t, h.write(func(r repos) error { return r.attribution.CreateAsset(context.Background(), a) }))
	return a
}

// record records a delivery in its own transaction.
func record(h Harness, g store.GitHubContribution) (store.Contribution, error) {
	var c store.Contribution
	err := h.write(func(r repos) error {
		var err error
		c, err = r.attribution.RecordGitHubContribution(context.Background(), g)
		return err
	})
	return c, err
}

// CommitDelivery is a delivery without an id, recognised by repo and hash.
func CommitDelivery(hash, login, repo string, cost money.Micros, at time.Time) store.GitHubContribution {
	g := GitHubDelivery("", login, repo, cost, at)
	g.CommitHash = hash
	g.Contribution.Metadata = map[string]any{"github": map[string]any{"commit_hash": hash}}
	return g
}

// GitHubDelivery is a push delivery with an id, by login, to repository repo.
func GitHubDelivery(deliveryID, login, repo string, cost money.Micros, at time.Time) store.GitHubContribution {
	c := NewContribution("github:"+login, "", cost, at)
	c.Source = attribution.SourceGitHub
	c.Metadata = map[string]any{"github": map[string]any{"delivery_id": deliveryID}}
	return store.GitHubContribution{
		DeliveryID:   deliveryID,
		Contributor:  store.Contributor{ID: "github:" + login, TrustLevel: attribution.TrustGitHub, CreatedAt: at},
		Asset:        store.Asset{ID: uuid.NewString(), Type: attribution.TypeCode, Name: repo, GitHubRepository: repo, CreatedAt: at},
		Contribution: c,
	}
}

// insertDistribution records d in its own transaction.
func insertDistribution(t *testing.T, h Harness, d store.Distribution) {
	t.Helper()
	require.NoError(t, h.write(func(r repos) error { return r.attribution.InsertDistribution(context.Background(), d) }))
}

func assetIDs(as []store.Asset) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

func contributionIDs(cs []store.Contribution) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
