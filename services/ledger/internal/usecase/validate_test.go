package usecase_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/storetest"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// offline is an App with no database: a command it refuses before reading
// or writing anything answers; one that reached the store would panic.
func offline() *usecase.App {
	return usecase.New(nil, nil, usecase.Config{Clock: clock.NewFake(t0), Ideas: ideas{}})
}

func i32(v int32) *int32 { return &v }

func f64(v float64) *float64 { return &v }

// requireFields checks err is one 422 naming exactly fields, in order.
func requireFields(t *testing.T, err error, fields ...fault.FieldError) {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want a validation error, got %v", err)
	require.Equal(t, fault.Invalid, fe.Kind, "%v", err)
	require.Equal(t, fields, fe.Fields)
}

func field(name, message string) fault.FieldError {
	return fault.FieldError{Field: name, Message: message}
}

// TestCommandsNameEveryBadField: each use case checks its whole command
// before it touches the store, and one request learns every bad field in
// one 422, with the field names and messages the API has always answered.
func TestCommandsNameEveryBadField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	long := strings.Repeat("x", 501)
	for _, c := range []struct {
		name string
		run  func(a *usecase.App) error
		want []fault.FieldError
	}{
		// Onboarding and tokens.
		{"register: a handle outside [a-z0-9_-]{3,40}", func(a *usecase.App) error {
			return a.Register(ctx, store.Contributor{ID: "c", Handle: "Ada"}, store.Session{TokenHash: "h"})
		}, []fault.FieldError{field("handle", "must match [a-z0-9_-]{3,40}")}},
		{"authenticate: no hash", func(a *usecase.App) error {
			_, err := a.Authenticate(ctx, "")
			return err
		}, []fault.FieldError{field("token_hash", "is required")}},
		{"create token: name, role and ttl at once", func(a *usecase.App) error {
			_, _, err := a.CreateToken(ctx, usecase.CreateTokenCmd{Name: " ", Role: "contributor", TTL: "30s"}, nil)
			return err
		}, []fault.FieldError{field("name", "is required"), field("role", "must be one of viewer, worker, operator, admin"),
			field("ttl", "must be at least 1m")}},
		{"revoke token: no id", func(a *usecase.App) error {
			_, err := a.RevokeToken(ctx, identity.Granter{}, "")
			return err
		}, []fault.FieldError{field("id", "is required")}},

		// Attribution.
		{"create asset: type, name and description at once", func(a *usecase.App) error {
			_, err := a.CreateAsset(ctx, usecase.CreateAssetCmd{Type: "code", Name: strings.Repeat("n", 201), Description: "\xff"})
			return err
		}, []fault.FieldError{field("type", "must be one of CODE, MODEL, CONTENT, DATA"), field("name", "must be at most 200 characters"),
			field("description", "must be valid UTF-8")}},
		{"list assets: limit and offset at once", func(a *usecase.App) error {
			_, err := items(a.ListAssets(ctx, usecase.Page{Limit: i32(0), Offset: -1}))
			return err
		}, []fault.FieldError{field("limit", "must be between 1 and 500"), field("offset", "must not be negative")}},
		{"create contribution: every field missing", func(a *usecase.App) error {
			_, err := a.CreateContribution(ctx, usecase.CreateContributionCmd{Metadata: map[string]any{}}, nil)
			return err
		}, []fault.FieldError{field("contributor_id", "is required"), field("asset_id", "is required"), field("cost_amount", "is required")}},
		{"create contribution: a negative cost and metadata that does not score", func(a *usecase.App) error {
			_, err := a.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada", AssetID: "a", CostAmount: f64(-1),
				Metadata: map[string]any{"has_tests": "yes", "complexity": 3.0, "pad": strings.Repeat("p", attribution.MaxMetadataBytes)}}, nil)
			return err
		}, []fault.FieldError{field("cost_amount", "must not be negative"), field("metadata.has_tests", "must be a boolean"),
			field("metadata.complexity", "must be a string"), field("metadata", "must be at most 4096 bytes of JSON")}},
		{"create contribution: a contributor id with a control character, a cost too precise", func(a *usecase.App) error {
			_, err := a.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "a\nb", AssetID: "a", CostAmount: f64(0.1234567)}, nil)
			return err
		}, []fault.FieldError{field("contributor_id", "must not contain control characters"), field("cost_amount", "must have at most 6 decimal places")}},
		{"asset contributions: a page past 500", func(a *usecase.App) error {
			_, err := items(a.ListAssetContributions(ctx, "a", usecase.Page{Limit: i32(501)}))
			return err
		}, []fault.FieldError{field("limit", "must be between 1 and 500")}},
		{"contributor contributions: a negative offset", func(a *usecase.App) error {
			_, err := items(a.ListContributorContributions(ctx, "ada", usecase.Page{Offset: -1}))
			return err
		}, []fault.FieldError{field("offset", "must not be negative")}},
		{"create distribution: no asset and a negative value at once", func(a *usecase.App) error {
			_, err := a.CreateDistribution(ctx, usecase.CreateDistributionCmd{ValueAmount: -1, PayCC: true})
			return err
		}, []fault.FieldError{field("asset_id", "is required"), field("value_amount", "must not be negative")}},
		{"create distribution: a value too precise", func(a *usecase.App) error {
			_, err := a.CreateDistribution(ctx, usecase.CreateDistributionCmd{AssetID: "a", ValueAmount: 0.0000001})
			return err
		}, []fault.FieldError{field("value_amount", "must have at most 6 decimal places")}},
		{"distribution: a payout page past 1000 and a negative offset", func(a *usecase.App) error {
			_, err := a.GetDistribution(ctx, "d", usecase.Page{Limit: i32(1001), Offset: -1})
			return err
		}, []fault.FieldError{field("limit", "must be between 1 and 1000"), field("offset", "must not be negative")}},
		{"asset distributions: a page past 100", func(a *usecase.App) error {
			_, err := a.ListAssetDistributions(ctx, "a", usecase.Page{Limit: i32(101)})
			return err
		}, []fault.FieldError{field("limit", "must be between 1 and 100")}},
		{"github delivery: an id past 200 characters", func(a *usecase.App) error {
			_, err := a.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: strings.Repeat("d", 201), Body: []byte("{}")})
			return err
		}, []fault.FieldError{field("X-GitHub-Delivery", "must be at most 200 characters")}},
		{"github delivery: no JSON object", func(a *usecase.App) error {
			_, err := a.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: "d-1", Body: []byte("[]")})
			return err
		}, []fault.FieldError{field("body", "must be a JSON object")}},
		{"github delivery: neither a delivery id nor a commit hash", func(a *usecase.App) error {
			_, err := a.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{
				Body: []byte(`{"contributor_email":"ada@example.com","repository":"octo/repo","cost_amount":1}`)})
			return err
		}, []fault.FieldError{field("commit_hash", "is required without X-GitHub-Delivery: a delivery without one is recognised by its repository and commit hash")}},
		{"github delivery: metadata that does not score", func(a *usecase.App) error {
			_, err := a.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: "d-1",
				Body: []byte(`{"contributor_email":"ada@example.com","repository":"octo/repo","cost_amount":1,"metadata":{"has_docs":1}}`)})
			return err
		}, []fault.FieldError{field("metadata.has_docs", "must be a boolean")}},

		// The credit economy.
		{"deposit: every field missing", func(a *usecase.App) error {
			_, err := a.Deposit(ctx, usecase.DepositCmd{}, nil)
			return err
		}, []fault.FieldError{field("contributor_id", "is required"), field("amount_usd", "must be more than 0"), field("reference", "is required")}},
		{"deposit: an amount past a billion and a reference past 500 bytes", func(a *usecase.App) error {
			_, err := a.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 1e9 + 1, Reference: long}, nil)
			return err
		}, []fault.FieldError{field("amount_usd", "must be at most 1000000000"), field("reference", "must be at most 500 bytes")}},
		{"withdraw: no contributor, no finite amount", func(a *usecase.App) error {
			_, err := a.Withdraw(ctx, usecase.WithdrawCmd{AmountCC: math.NaN()}, nil)
			return err
		}, []fault.FieldError{field("contributor_id", "is required"), field("amount_cc", "must be a finite number")}},
		{"stake: every field missing", func(a *usecase.App) error {
			_, err := a.Stake(ctx, usecase.StakeCmd{}, nil)
			return err
		}, []fault.FieldError{field("contributor_id", "is required"), field("idea_id", "is required"), field("amount_cc", "must be more than 0")}},
		{"stake on a dry run: the same", func(a *usecase.App) error {
			_, err := a.Stake(ctx, usecase.StakeCmd{AmountCC: 0.0000001, DryRun: true}, nil)
			return err
		}, []fault.FieldError{field("contributor_id", "is required"), field("idea_id", "is required"),
			field("amount_cc", "must have at most 6 decimal places")}},
		{"unstake: every field missing", func(a *usecase.App) error {
			_, err := a.Unstake(ctx, usecase.UnstakeCmd{AmountCC: -5}, nil)
			return err
		}, []fault.FieldError{field("contributor_id", "is required"), field("idea_id", "is required"), field("amount_cc", "must be more than 0")}},
		{"pledge: every field missing", func(a *usecase.App) error {
			_, err := a.Pledge(ctx, usecase.PledgeCmd{HoursPledged: 100_001}, nil)
			return err
		}, []fault.FieldError{field("id", "is required"), field("idea_id", "is required"), field("hours_pledged", "must be at most 100000")}},
		{"balances: no contributor", func(a *usecase.App) error {
			_, err := a.Balances(ctx, "")
			return err
		}, []fault.FieldError{field("contributor_id", "is required")}},
		{"investments: no contributor", func(a *usecase.App) error {
			_, err := a.Investments(ctx, "", usecase.Page{})
			return err
		}, []fault.FieldError{field("id", "is required")}},
		{"investments: no contributor, a page past 1000 and a negative offset", func(a *usecase.App) error {
			_, err := a.Investments(ctx, "", usecase.Page{Limit: i32(1001), Offset: -1})
			return err
		}, []fault.FieldError{field("id", "is required"), field("limit", "must be between 1 and 1000"), field("offset", "must not be negative")}},
		{"history: no contributor and a page past 500", func(a *usecase.App) error {
			_, err := a.History(ctx, "", usecase.Page{Limit: i32(501), Offset: -1})
			return err
		}, []fault.FieldError{field("id", "is required"), field("limit", "must be between 1 and 500"), field("offset", "must not be negative")}},
		{"invest preview: no idea", func(a *usecase.App) error {
			_, err := a.InvestPreview(ctx, "")
			return err
		}, []fault.FieldError{field("idea_id", "is required")}},
		{"oracle reading: not more than 0", func(a *usecase.App) error {
			_, err := a.RecordOraclePrice(ctx, usecase.OraclePriceCmd{CCPerUSD: 0, Actor: "admin"})
			return err
		}, []fault.FieldError{field("cc_per_usd", "must be more than 0")}},
		{"audit page: a limit of 0", func(a *usecase.App) error {
			_, err := a.AuditPage(ctx, usecase.Page{Limit: i32(0)})
			return err
		}, []fault.FieldError{field("limit", "must be between 1 and 500")}},
		{"incidents: a negative offset", func(a *usecase.App) error {
			_, err := items(a.Incidents(ctx, usecase.Page{Offset: -3}))
			return err
		}, []fault.FieldError{field("offset", "must not be negative")}},
		{"unfreeze: a reason past 500 bytes", func(a *usecase.App) error {
			_, err := a.Unfreeze(ctx, long, "admin")
			return err
		}, []fault.FieldError{field("reason", "must be at most 500 bytes")}},
		{"economy mode: no reason", func(a *usecase.App) error {
			_, err := a.SetMode(ctx, usecase.ModeWarning, " ", "monitor")
			return err
		}, []fault.FieldError{field("reason", "is required")}},
		// The reason is checked before the mode, and answered alone: what
		// the API has always said to a request wrong in both.
		{"economy mode: no reason and no mode", func(a *usecase.App) error {
			_, err := a.SetMode(ctx, "calm", "", "monitor")
			return err
		}, []fault.FieldError{field("reason", "is required")}},
		{"economy mode: no mode", func(a *usecase.App) error {
			_, err := a.SetMode(ctx, "calm", "drill", "monitor")
			return err
		}, []fault.FieldError{field("mode", "must be one of normal, warning, minting_paused, read_only, frozen")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireFields(t, c.run(offline()), c.want...)
		})
	}
}

// TestRefusalComesAfterTheFields: the handler's refusal of a command's
// caller or Idempotency-Key (Refused) is answered only once the fields are
// valid, and before the movement's own rules (the least CC one movement may
// move), as the API has always ordered them.
func TestRefusalComesAfterTheFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	refused := fault.New(fault.Forbidden, "only the contributor's own session moves its CC")
	badKey := fault.Validation(fault.Field("Idempotency-Key", "must be at most 255 characters"))
	for _, c := range []struct {
		name string
		// bad has a bad field and the refusal; good only the refusal.
		bad, good func(a *usecase.App) error
		badFields []fault.FieldError
		want      error
	}{
		{"withdraw", func(a *usecase.App) error {
			_, err := a.Withdraw(ctx, usecase.WithdrawCmd{AmountCC: 1, Refused: refused}, nil)
			return err
		}, func(a *usecase.App) error {
			// 0.005 CC is less than one movement may move: refused all the same.
			_, err := a.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: 0.005, Refused: refused}, nil)
			return err
		}, []fault.FieldError{field("contributor_id", "is required")}, refused},
		{"stake", func(a *usecase.App) error {
			_, err := a.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", AmountCC: 1, Refused: refused}, nil)
			return err
		}, func(a *usecase.App) error {
			_, err := a.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: " ", AmountCC: 0.005, Refused: refused}, nil)
			return err
		}, []fault.FieldError{field("idea_id", "is required")}, refused},
		{"unstake", func(a *usecase.App) error {
			_, err := a.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", Refused: refused}, nil)
			return err
		}, func(a *usecase.App) error {
			_, err := a.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: 0.005, Refused: refused}, nil)
			return err
		}, []fault.FieldError{field("amount_cc", "must be more than 0")}, refused},
		{"pledge", func(a *usecase.App) error {
			_, err := a.Pledge(ctx, usecase.PledgeCmd{ContributorID: "ada", HoursPledged: 2, Refused: refused}, nil)
			return err
		}, func(a *usecase.App) error {
			// An idea the portfolio does not know is its 404, after the refusal.
			_, err := a.Pledge(ctx, usecase.PledgeCmd{ContributorID: "ada", IdeaID: "unknown", HoursPledged: 2, Refused: refused}, nil)
			return err
		}, []fault.FieldError{field("idea_id", "is required")}, refused},
		{"deposit", func(a *usecase.App) error {
			_, err := a.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 1, Refused: badKey}, nil)
			return err
		}, func(a *usecase.App) error {
			_, err := a.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 1, Reference: "r", Refused: badKey}, nil)
			return err
		}, []fault.FieldError{field("reference", "is required")}, badKey},
		{"contribution", func(a *usecase.App) error {
			_, err := a.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada", AssetID: "a", Refused: badKey}, nil)
			return err
		}, func(a *usecase.App) error {
			_, err := a.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada", AssetID: "a", CostAmount: f64(1),
				Refused: badKey}, nil)
			return err
		}, []fault.FieldError{field("cost_amount", "is required")}, badKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireFields(t, c.bad(offline()), c.badFields...)
			require.Equal(t, c.want, c.good(offline()))
		})
	}
}

// TestContributionCommand: a contribution through its command is the
// record the request asked for, scored from its metadata, by a contributor
// created on first use; the store's refusals are the API's 404 and 400.
func TestContributionCommand(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		a := createAsset(t, e)
		meta := map[string]any{"has_tests": true, "has_docs": false, "note": "x"}
		c, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada@example.com", AssetID: a.ID,
			CostAmount: f64(12.5), Metadata: meta}, nil)
		require.NoError(t, err)
		want := store.Contribution{ID: c.ID, ContributorID: "ada@example.com", AssetID: a.ID, Cost: 12_500_000,
			Coherence: attribution.CoherenceBase, Metadata: meta, Source: attribution.SourceAPI, CreatedAt: t0,
			Status: attribution.StatusClaimed, ClaimedCost: 12_500_000}
		require.Equal(t, want, c)
		got, err := e.app.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
		who, err := contributor(t, e, "ada@example.com")
		require.NoError(t, err)
		require.Equal(t, storetest.Implicit("ada@example.com", t0), who)

		key := &idempotency.Request{Scope: "contribution:ada@example.com", Key: "k", Hash: "h"}
		first, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada@example.com", AssetID: a.ID,
			CostAmount: f64(0), Metadata: map[string]any{}}, key)
		require.NoError(t, err)
		again, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada@example.com", AssetID: a.ID,
			CostAmount: f64(0), Metadata: map[string]any{}}, key)
		require.NoError(t, err)
		require.Equal(t, first, again, "a retry answers the first contribution")

		_, err = e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada@example.com", AssetID: "nope",
			CostAmount: f64(1)}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.NotFound, k)
		require.Equal(t, `asset "nope" not found`, detail)

		full := createAsset(t, e)
		for range 9 {
			_, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "big", AssetID: full.ID,
				CostAmount: f64(attribution.MaxAmount.Float64())}, nil)
			require.NoError(t, err)
		}
		_, err = e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "big", AssetID: full.ID, CostAmount: f64(1)}, nil)
		k, detail = kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Equal(t, `asset "`+full.ID+`" total_cost would exceed 9000000000`, detail)
	})
}

// TestGitHubDeliveryCommand: a push delivery is read, recorded once per
// delivery id (or repository and commit), and a push with no new commits
// records nothing.
func TestGitHubDeliveryCommand(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		shaped := []byte(`{"contributor_email":"ada@example.com","repository":"Octo/Repo","commit_hash":"ABC123","cost_amount":2.5,` +
			`"metadata":{"has_docs":true}}`)
		d, err := e.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: "d-1", Body: shaped})
		require.NoError(t, err)
		require.False(t, d.Duplicate)
		require.Empty(t, d.Ignored)
		require.Equal(t, "Octo/Repo", d.Push.Repository)
		c := d.Contribution
		require.Equal(t, "email:ada@example.com", c.ContributorID)
		require.Equal(t, money.Micros(2_500_000), c.Cost)
		require.Equal(t, attribution.CoherenceBase, c.Coherence, "a shaped body's flags are its sender's claim: the base score")
		require.Equal(t, attribution.StatusClaimed, c.Status, "not signed: a claim")
		require.Equal(t, attribution.SourceGitHub, c.Source)
		require.Equal(t, t0, c.CreatedAt)
		require.Equal(t, map[string]any{"repository": "Octo/Repo", "delivery_id": "d-1", "commit_hash": "ABC123", "email": "ada@example.com"},
			c.Metadata["github"])
		asset, err := e.app.GetAsset(ctx, c.AssetID)
		require.NoError(t, err)
		require.Equal(t, "octo/repo", asset.GitHubRepository)
		require.Equal(t, "GitHub repository Octo/Repo", asset.Description)
		who, err := contributor(t, e, "email:ada@example.com")
		require.NoError(t, err)
		require.Equal(t, attribution.TrustGitHub, who.TrustLevel)

		again, err := e.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: "d-1", Body: shaped})
		require.NoError(t, err)
		require.True(t, again.Duplicate, "the same delivery id")
		require.Equal(t, c, again.Contribution)
		// The same commit again — with a fresh delivery id, without one, in
		// another body — is a repeat: the signature covers the body, not
		// the header, so the delivery id alone keys nothing.
		for _, cmd := range []usecase.GitHubDeliveryCmd{
			{DeliveryID: "d-fresh", Body: shaped},
			{Body: shaped},
			{DeliveryID: "d-other-body", Body: []byte(`{"contributor_email":"eve@example.com","repository":"octo/repo","commit_hash":"abc123","cost_amount":99}`)},
		} {
			repeat, err := e.app.RecordGitHubDelivery(ctx, cmd)
			require.NoError(t, err)
			require.True(t, repeat.Duplicate, "%s %s", cmd.DeliveryID, cmd.Body)
			require.Equal(t, c, repeat.Contribution, "the original answers")
		}
		byCommit, err := e.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{Body: []byte(strings.Replace(string(shaped), "ABC123", "DEF456", 1))})
		require.NoError(t, err)
		require.False(t, byCommit.Duplicate, "without a delivery id, a new commit is new")
		// A body naming no commit is known by its hash: a captured one sent
		// with fresh delivery ids is recorded once.
		noCommit := []byte(`{"contributor_email":"ada@example.com","repository":"octo/repo","cost_amount":1}`)
		first, err := e.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: "d-body-1", Body: noCommit})
		require.NoError(t, err)
		require.False(t, first.Duplicate)
		for _, id := range []string{"d-body-2", "d-body-3"} {
			replay, err := e.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: id, Body: noCommit})
			require.NoError(t, err)
			require.True(t, replay.Duplicate, id)
			require.Equal(t, first.Contribution, replay.Contribution)
		}

		deletion := []byte(`{"ref":"refs/heads/gone","deleted":true,"repository":{"full_name":"octo/repo"},"pusher":{"name":"octocat"},"commits":[]}`)
		ig, err := e.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: "d-2", Body: deletion})
		require.NoError(t, err)
		require.Equal(t, usecase.GitHubDelivery{Ignored: "push with a deletion of refs/heads/gone: nothing recorded"}, ig)
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, counts["contributions"], "the first delivery, the new commit and the commitless body; the repeats and the deletion recorded nothing")
	})
}

// TestUnfreezeWithoutAReason: an unfreeze's reason is optional; without
// one it records DefaultUnfreezeReason.
func TestUnfreezeWithoutAReason(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		_, err := e.app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(0), "drill"))
		require.NoError(t, err)
		e.clock.Advance(time.Second) // incidents list newest first
		m, err := e.app.Unfreeze(ctx, "", "admin")
		require.NoError(t, err)
		require.Equal(t, usecase.DefaultUnfreezeReason, m.Reason)
		incidents, err := items(e.app.Incidents(ctx, usecase.Page{}))
		require.NoError(t, err)
		require.Equal(t, "frozen → normal: unfrozen by an administrator", incidents[0].Detail)
	})
}
