// Package storetest is the ledger repositories' conformance suite: every
// engine's implementation must pass it. The repositories open no
// transactions, so the suite writes inside db.Tx as the use cases do; the
// use cases' own composite and concurrent behaviour is tested in the
// usecase package, on every engine too.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Harness is what the suite runs against: an empty, migrated database and
// the constructors of the repositories over a querier.
type Harness struct {
	DB          *database.DB
	Identity    func(q database.Querier) store.Identity
	Attribution func(q database.Querier) store.Attribution
	Credit      func(q database.Querier) store.Credit
	Audit       func(q database.Querier) store.Audit
	Integrity   func(q database.Querier) store.Integrity
	Impact      func(q database.Querier) store.Impact
}

// repos are the repositories over one querier.
type repos struct {
	identity    store.Identity
	attribution store.Attribution
	credit      store.Credit
	audit       store.Audit
	integrity   store.Integrity
	impact      store.Impact
}

func (h Harness) over(q database.Querier) repos {
	return repos{identity: h.Identity(q), attribution: h.Attribution(q), credit: h.Credit(q), audit: h.Audit(q),
		integrity: h.Integrity(q), impact: h.Impact(q)}
}

// read returns the repositories over the pool.
func (h Harness) read() repos { return h.over(h.DB) }

// write runs fn in one transaction, as a use case does.
func (h Harness) write(fn func(r repos) error) error {
	return h.DB.Tx(context.Background(), func(q database.Querier) error { return fn(h.over(q)) })
}

// Run runs the suite, a subtest per topic; newHarness returns a harness
// over an empty database for one case. One file per topic: identity.go,
// assets.go, contributions.go, deliveries.go (GitHub), distributions.go,
// accounts.go (Apply, balances and positions), journal.go (history and
// the coherence check), reconcile.go (the journal against the audit log),
// economy.go (the economy row and its locks), deposits.go (deposits,
// cooling lots, pledges and the unstake window), oracle.go (readings,
// incidents and freeze nonces), audit.go (records and repairs) and
// queue.go (the audit queue, the Merkle tree and the checkpoints),
// integrity.go (findings, the scrubber's state and its slices), impact.go
// (impact records and the attribution of positions);
// attribution.go holds the attribution topics' fixtures, held.go the
// helpers of the cases where two transactions overlap (Postgres).
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	for _, topic := range []struct {
		name string
		run  func(t *testing.T, newHarness func(t *testing.T) Harness)
	}{
		{"identity", runIdentity},
		{"assets", runAssets},
		{"contributions", runContributions},
		{"deliveries", runDeliveries},
		{"distributions", runDistributions},
		{"accounts", runAccounts},
		{"journal", runJournal},
		{"reconcile", runReconcile},
		{"economy", runEconomy},
		{"deposits", runDeposits},
		{"oracle", runOracle},
		{"audit", runAudit},
		{"queue", runQueue},
		{"supply", runSupply},
		{"integrity", runIntegrity},
		{"impact", runImpact},
	} {
		t.Run(topic.name, func(t *testing.T) {
			t.Parallel()
			topic.run(t, newHarness)
		})
	}
}

func contributor(handle string, now time.Time) store.Contributor {
	return store.Contributor{ID: uuid.NewString(), Handle: handle, TrustLevel: identity.TrustTOFU, CreatedAt: now.Truncate(time.Microsecond)}
}

// register registers a contributor with handle at now, with a session of
// its own, and returns it.
func register(t *testing.T, h Harness, handle string, now time.Time) store.Contributor {
	t.Helper()
	c := contributor(handle, now)
	require.NoError(t, h.write(func(r repos) error {
		return r.identity.Register(context.Background(), c, store.Session{TokenHash: "session-of-" + c.ID, CreatedAt: now})
	}))
	return c
}
