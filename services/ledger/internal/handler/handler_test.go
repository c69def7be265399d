package handler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/handler"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// newHandler serves a ledger with one registered contributor, ada.
func newHandler(t *testing.T, engine database.Engine) *handler.Handler {
	t.Helper()
	app, _ := newApp(t, engine)
	return handler.New(app, handler.Options{Clock: clock.NewFake(t0)})
}

// newApp is a ledger's use cases over a fresh database of engine, with one
// registered contributor, ada, and the database.
func newApp(t *testing.T, engine database.Engine) (*usecase.App, *database.DB) {
	t.Helper()
	db := dbtest.Open(t, engine, "ledger", store.Migrations())
	app := usecase.New(db, func(q database.Querier) usecase.Repos {
		return usecase.Repos{
			Credit: sqlstore.NewCredit(q), Audit: sqlstore.NewAudit(q), Integrity: sqlstore.NewIntegrity(q), Identity: sqlstore.NewIdentity(q),
			Attribution: sqlstore.NewAttribution(q), Impact: sqlstore.NewImpact(q), Keys: idempotency.SQL{Q: q}, Send: q.SendBatch,
		}
	}, usecase.Config{Clock: clock.NewFake(t0)})
	require.NoError(t, app.Register(context.Background(), store.Contributor{ID: "ada-id", Handle: "ada", TrustLevel: "tofu", CreatedAt: t0},
		store.Session{TokenHash: "ada-hash", CreatedAt: t0}))
	return app, db
}

// TestFieldsComeBeforeTheCaller: the handler checks who acts and reads the
// Idempotency-Key, but a request with bad fields learns those first,
// whoever sends it; then that its caller may not act (403) or its key is
// malformed (422); only then what one movement may move. The API has
// always answered in that order.
func TestFieldsComeBeforeTheCaller(t *testing.T) {
	t.Parallel()
	ada := authz.Principal{Kind: authz.Session, Role: authz.Contributor, ID: "ada-hash", ContributorID: "ada-id", Name: "ada"}
	admin := authz.Principal{Kind: authz.AdminKey, Role: authz.Admin, ID: "admin", Name: "admin"}
	notOwner := &fault.Error{Kind: fault.Forbidden, Detail: "only the contributor's own session moves its CC"}
	badKey := fault.Validation(fault.Field("Idempotency-Key", "must be at most %d characters", idempotency.MaxKey))
	longKey := strings.Repeat("k", idempotency.MaxKey+1)
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		h := newHandler(t, engine)
		for _, c := range []struct {
			name string
			as   authz.Principal
			key  string
			call func(ctx context.Context) error
			want error
		}{
			{"withdraw by the administrator, bad fields: 422", admin, "", func(ctx context.Context) error {
				_, err := h.Withdraw(ctx, &ledgerv1.WithdrawRequest{})
				return err
			}, fault.Validation(fault.Field("contributor_id", "is required"), fault.Field("amount_cc", "must be more than 0"))},
			{"withdraw by the administrator: 403", admin, "", func(ctx context.Context) error {
				_, err := h.Withdraw(ctx, &ledgerv1.WithdrawRequest{ContributorId: "ada-id", AmountCc: 1})
				return err
			}, notOwner},
			{"withdraw of dust by the administrator: 403 before the least movement", admin, "", func(ctx context.Context) error {
				_, err := h.Withdraw(ctx, &ledgerv1.WithdrawRequest{ContributorId: "ada-id", AmountCc: 0.005})
				return err
			}, notOwner},
			{"withdraw of dust by its owner: 422", ada, "", func(ctx context.Context) error {
				_, err := h.Withdraw(ctx, &ledgerv1.WithdrawRequest{ContributorId: "ada-id", AmountCc: 0.005})
				return err
			}, fault.Validation(fault.Field("amount_cc", "must be at least 0.01 (the least CC one movement may move)"))},
			{"withdraw with a bad amount and a bad key: the amount", ada, longKey, func(ctx context.Context) error {
				_, err := h.Withdraw(ctx, &ledgerv1.WithdrawRequest{ContributorId: "ada-id", AmountCc: -1})
				return err
			}, fault.Validation(fault.Field("amount_cc", "must be more than 0"))},
			{"withdraw with a bad key: the key", ada, longKey, func(ctx context.Context) error {
				_, err := h.Withdraw(ctx, &ledgerv1.WithdrawRequest{ContributorId: "ada-id", AmountCc: 1})
				return err
			}, badKey},
			{"stake by the administrator without an idea: 422", admin, "", func(ctx context.Context) error {
				_, err := h.Stake(ctx, &ledgerv1.StakeRequest{ContributorId: "ada-id", AmountCc: 1})
				return err
			}, fault.Validation(fault.Field("idea_id", "is required"))},
			{"stake by the administrator: 403", admin, "", func(ctx context.Context) error {
				_, err := h.Stake(ctx, &ledgerv1.StakeRequest{ContributorId: "ada-id", IdeaId: "idea-1", AmountCc: 1})
				return err
			}, notOwner},
			{"unstake by the administrator: 403", admin, "", func(ctx context.Context) error {
				_, err := h.Unstake(ctx, &ledgerv1.UnstakeRequest{ContributorId: "ada-id", IdeaId: "idea-1", AmountCc: 1})
				return err
			}, notOwner},
			{"pledge by the administrator without hours: 422", admin, "", func(ctx context.Context) error {
				_, err := h.CreatePledge(ctx, &ledgerv1.CreatePledgeRequest{Id: "ada-id", IdeaId: "idea-1"})
				return err
			}, fault.Validation(fault.Field("hours_pledged", "must be more than 0"))},
			{"pledge by the administrator: 403", admin, "", func(ctx context.Context) error {
				_, err := h.CreatePledge(ctx, &ledgerv1.CreatePledgeRequest{Id: "ada-id", IdeaId: "idea-1", HoursPledged: 1})
				return err
			}, notOwner},
			{"deposit with bad fields and a bad key: the fields", admin, longKey, func(ctx context.Context) error {
				_, err := h.Deposit(ctx, &ledgerv1.DepositRequest{ContributorId: "ada-id", AmountUsd: 1})
				return err
			}, fault.Validation(fault.Field("reference", "is required"))},
			{"deposit with a bad key: the key", admin, longKey, func(ctx context.Context) error {
				_, err := h.Deposit(ctx, &ledgerv1.DepositRequest{ContributorId: "ada-id", AmountUsd: 1, Reference: "r"})
				return err
			}, badKey},
			{"contribution without a cost and with a bad key: the cost", ada, longKey, func(ctx context.Context) error {
				_, err := h.CreateContribution(ctx, &ledgerv1.CreateContributionRequest{ContributorId: "ada-id", AssetId: "a"})
				return err
			}, fault.Validation(fault.Field("cost_amount", "is required"))},
			{"contribution with a bad key: the key", ada, longKey, func(ctx context.Context) error {
				cost := 1.0
				_, err := h.CreateContribution(ctx, &ledgerv1.CreateContributionRequest{ContributorId: "ada-id", AssetId: "a", CostAmount: &cost})
				return err
			}, badKey},
		} {
			t.Run(c.name, func(t *testing.T) {
				ctx := authz.WithPrincipal(context.Background(), c.as)
				if c.key != "" {
					ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(rpcmeta.IdempotencyKeyKey, c.key))
				}
				require.Equal(t, c.want, c.call(ctx))
			})
		}
	})
}
