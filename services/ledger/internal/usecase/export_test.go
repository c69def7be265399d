package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// What the tests drive below the commands: recording a contribution, a
// GitHub delivery and a distribution as the store takes them, so a test can
// name the ids, times and scores a request cannot.

// AddContribution is addContribution, below CreateContribution.
func (a *App) AddContribution(ctx context.Context, c store.Contribution, contributor store.Contributor, idem *idempotency.Request) (store.Contribution, error) {
	return a.addContribution(ctx, c, contributor, idem)
}

// RecordGitHubContribution is recordGitHub, below RecordGitHubDelivery.
func (a *App) RecordGitHubContribution(ctx context.Context, g store.GitHubContribution) (store.Contribution, bool, error) {
	return a.recordGitHub(ctx, g)
}

// CreateStoreDistribution is createDistribution, below CreateDistribution.
func (a *App) CreateStoreDistribution(ctx context.Context, d store.Distribution) (store.Distribution, error) {
	return a.createDistribution(ctx, d)
}

// WalkAudit is VerifyAudit without its consequences: the walk's verdict
// alone, no finding recorded and no mode changed, for the tests that edit
// the log many times over and check what each walk finds.
func (a *App) WalkAudit(ctx context.Context, full bool) (Verification, error) {
	return a.verifyAudit(ctx, full)
}

// Report is report: the findings a check that began at began made.
func (a *App) Report(ctx context.Context, by string, began time.Time, found ...store.Finding) error {
	return a.report(ctx, by, began, found...)
}
