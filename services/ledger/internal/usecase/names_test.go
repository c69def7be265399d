package usecase_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// statements records the statements its queriers send one by one (a batch
// counts as one trip, its statements unseen).
type statements struct {
	mu    sync.Mutex
	sent  []string
	trips int
}

func (s *statements) add(q string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent, s.trips = append(s.sent, q), s.trips+1
}

// take returns what was recorded since the last take, and forgets it.
func (s *statements) take() (sent []string, trips int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sent, trips = s.sent, s.trips
	s.sent, s.trips = nil, 0
	return sent, trips
}

type spying struct {
	database.Querier
	s *statements
}

func (q spying) Exec(ctx context.Context, s string, args ...any) (int64, error) {
	q.s.add(s)
	return q.Querier.Exec(ctx, s, args...)
}

func (q spying) Query(ctx context.Context, s string, args ...any) (database.Rows, error) {
	q.s.add(s)
	return q.Querier.Query(ctx, s, args...)
}

func (q spying) QueryRow(ctx context.Context, s string, args ...any) database.Row {
	q.s.add(s)
	return q.Querier.QueryRow(ctx, s, args...)
}

func (q spying) SendBatch(ctx context.Context, b *database.Batch) error {
	q.s.add("batch")
	return q.Querier.SendBatch(ctx, b)
}

// readsContributors reports whether a statement reads the contributors
// table.
func readsContributors(sent []string) bool {
	for _, s := range sent {
		if strings.Contains(s, "FROM contributors") {
			return true
		}
	}
	return false
}

// TestMoneyWritesNameTheContributor: every money write answers the
// contributor's handle. A deposit, a withdrawal and a pledge read the
// contributor anyway (it must exist) and take it from there; a stake and an
// unstake with a position read no contributor, and take the caller's, which
// the handler vouches is the contributor's: the stake's fast path stays a
// transfer and nothing else (docs/ledger.md, "The money engine").
func TestMoneyWritesNameTheContributor(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "ledger", store.Migrations())
		spy := &statements{}
		app := usecase.New(db, func(q database.Querier) usecase.Repos { return repos(spying{Querier: q, s: spy}) },
			usecase.Config{Clock: clock.NewFake(t0), Ideas: ideas{}})
		require.NoError(t, app.Register(ctx, store.Contributor{ID: "ada-id", Handle: "ada", TrustLevel: "tofu", CreatedAt: t0},
			store.Session{TokenHash: "h", CreatedAt: t0}))

		d, err := app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada-id", AmountUSD: 10, Reference: "wire-1", Actor: "admin"}, nil)
		require.NoError(t, err)
		require.Equal(t, "ada", d.ContributorHandle, "the administrator's deposit names ada from the read that checks she exists")
		again, err := app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada-id", AmountUSD: 10, Reference: "wire-1", Actor: "admin"}, nil)
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, "ada", again.ContributorHandle, "a repeated reference too")

		spy.take()
		s, err := app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada-id", IdeaID: "idea-1", AmountCC: 100, Actor: "ada-id", ActorHandle: "ada"}, nil)
		require.NoError(t, err)
		require.Equal(t, "ada", s.ContributorHandle)
		sent, stakeTrips := spy.take()
		require.False(t, readsContributors(sent), "the fast path reads no contributor: %q", sent)
		s, err = app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada-id", IdeaID: "idea-1", AmountCC: 100, Actor: "ada-id"}, nil)
		require.NoError(t, err)
		require.Empty(t, s.ContributorHandle, "no handle given: none answered, and none read for it")
		_, trips := spy.take()
		require.Equal(t, stakeTrips, trips, "the handle costs the stake no trip")
		s, err = app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada-id", IdeaID: "idea-1", AmountCC: 1, Actor: "token:t1", ActorHandle: "ops"}, nil)
		require.NoError(t, err)
		require.Empty(t, s.ContributorHandle, "a caller that is not the contributor names nobody")
		dry, err := app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada-id", IdeaID: "idea-1", AmountCC: 5, DryRun: true}, nil)
		require.NoError(t, err)
		require.Equal(t, "ada", dry.ContributorHandle, "a dry run reads the contributor with its balance")
		spy.take()

		u, err := app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada-id", IdeaID: "idea-1", AmountCC: 1, Actor: "ada-id", ActorHandle: "ada"}, nil)
		require.NoError(t, err)
		require.Equal(t, "ada", u.ContributorHandle)
		sent, _ = spy.take()
		require.False(t, readsContributors(sent), "an unstake with a position reads no contributor: %q", sent)

		w, err := app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada-id", AmountCC: 10, Actor: "ada-id"}, nil)
		require.NoError(t, err)
		require.Equal(t, "ada", w.ContributorHandle)
		p, err := app.Pledge(ctx, usecase.PledgeCmd{ContributorID: "ada-id", IdeaID: "idea-1", HoursPledged: 2}, nil)
		require.NoError(t, err)
		require.Equal(t, "ada", p.ContributorHandle)

		// A contributor a contribution created has no handle to answer.
		e := env{app: app, db: db}
		contribute(t, e, "octo", createAsset(t, e).ID, money.Scale, t0)
		p, err = app.Pledge(ctx, usecase.PledgeCmd{ContributorID: "octo", IdeaID: "idea-1", HoursPledged: 1}, nil)
		require.NoError(t, err)
		require.Empty(t, p.ContributorHandle)
	})
}
