package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// The history a movement must not get slower with (docs/performance.md,
// "A movement's cost and its history").
const (
	historyMovements = 100_000
	historyIdeas     = 1_000
	historyLog       = 1_000_000
)

type benchIdeas struct{}

func (benchIdeas) Idea(_ context.Context, id string) (usecase.IdeaInfo, error) {
	return usecase.IdeaInfo{ID: id, Stage: "specced", Confidence: 0.5}, nil
}

func benchRepos(q database.Querier) usecase.Repos {
	return usecase.Repos{Credit: sqlstore.NewCredit(q), Audit: sqlstore.NewAudit(q), Integrity: sqlstore.NewIntegrity(q), Identity: sqlstore.NewIdentity(q),
		Attribution: sqlstore.NewAttribution(q), Impact: sqlstore.NewImpact(q), Keys: idempotency.SQL{Q: q}, Send: q.SendBatch}
}

// BenchmarkStakeHistory stakes as one contributor, one stake after the
// other (sequencing the log every 64 stakes, as the sequencer would), on
// a fresh database and on one where that contributor already has 100 000
// movements over 1 000 positions and the log 1 000 000 entries. The two
// ns/op compare a movement's cost with and without history.
func BenchmarkStakeHistory(b *testing.B) {
	for _, engine := range []database.Engine{database.SQLite, database.Postgres} {
		for _, history := range []bool{false, true} {
			name := fmt.Sprintf("%s/fresh", engine)
			if history {
				name = fmt.Sprintf("%s/history", engine)
			}
			b.Run(name, func(b *testing.B) {
				db := dbtest.Open(b, engine, "ledger", store.Migrations())
				ctx := context.Background()
				app, signer := benchApp(b, db)
				seedStaker(b, db, app)
				if history {
					seedHistory(b, db, signer)
				}
				b.ResetTimer()
				for i := range b.N {
					if _, err := app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: fmt.Sprintf("idea-%d", i%historyIdeas),
						AmountCC: 0.01, Actor: "ada"}, nil); err != nil {
						b.Fatal(err)
					}
					if i%64 == 63 {
						sequenceAll(b, app)
					}
				}
				sequenceAll(b, app)
			})
		}
	}
}

// benchApp is the ledger's use cases over db, with a signing key of its
// own (returned, for a seed's checkpoint).
func benchApp(b *testing.B, db *database.DB) (*usecase.App, *audit.Signer) {
	skey, _, err := audit.GenerateKey("bench")
	if err != nil {
		b.Fatal(err)
	}
	signer, err := audit.NewSigner(skey)
	if err != nil {
		b.Fatal(err)
	}
	return usecase.New(db, benchRepos, usecase.Config{Ideas: benchIdeas{}, AuditSigner: signer}), signer
}

func sequenceAll(b *testing.B, app *usecase.App) {
	for {
		n, err := app.Sequence(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// seedStaker registers ada with more CC than any run stakes.
func seedStaker(b *testing.B, db *database.DB, app *usecase.App) {
	ctx := context.Background()
	if err := app.Register(ctx, store.Contributor{ID: "ada", Handle: "ada", TrustLevel: "tofu", CreatedAt: time.Now()},
		store.Session{TokenHash: "bench", CreatedAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO cc_accounts (account, bucket, contributor_id, balance)
		VALUES ('available:ada', 'available', 'ada', 1000000000000000)`); err != nil {
		b.Fatal(err)
	}
}

// seedHistory writes, in SQL, what 100 000 stakes of ada over 1 000 ideas
// leave in the journal, and an audit log of 1 000 000 entries with its
// Merkle tree and a signed checkpoint of it. The entries and the tree's
// hashes are filler (nothing here verifies them), in tables of the real
// size: what a movement reads and writes is what is measured.
func seedHistory(b *testing.B, db *database.DB, signer *audit.Signer) {
	ctx := context.Background()
	series := func(n int) string {
		if db.Engine() == database.Postgres {
			return fmt.Sprintf(`(SELECT g AS i FROM generate_series(0, %d) g)`, n-1)
		}
		return fmt.Sprintf(`(WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < %d) SELECT i FROM s)`, n-1)
	}
	hex64 := `printf('%064x', i)`
	if db.Engine() == database.Postgres {
		hex64 = `lpad(to_hex(i), 64, '0')`
	}
	stored := tlog.StoredHashCount(historyLog + 1)
	for _, q := range []string{
		`INSERT INTO cc_accounts (account, bucket, contributor_id, idea_id, balance)
			SELECT 'staked:ada:idea-' || i, 'staked', 'ada', 'idea-' || i, 100 FROM ` + series(historyIdeas) + ` t`,
		`INSERT INTO cc_entries (id, kind, contributor_id, idea_id, amount, audit_seq, created_at)
			SELECT 'seed-' || i, 'stake', 'ada', 'idea-' || (i % 1000), 1, 0, 1700000000000000 + i FROM ` + series(historyMovements) + ` t`,
		`INSERT INTO cc_lines (entry_id, account, bucket, contributor_id, idea_id, delta)
			SELECT 'seed-' || i, 'available:ada', 'available', 'ada', NULL, -1 FROM ` + series(historyMovements) + ` t`,
		`INSERT INTO cc_lines (entry_id, account, bucket, contributor_id, idea_id, delta)
			SELECT 'seed-' || i, 'staked:ada:idea-' || (i % 1000), 'staked', 'ada', 'idea-' || (i % 1000), 1 FROM ` + series(historyMovements) + ` t`,
		`INSERT INTO audit_entries (seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash)
			SELECT i + 1, 'stake', 1700000000000000 + i, 'ada', 'ada', 1, '{}', '00', ` + hex64 + `, ` + hex64 + ` FROM ` + series(historyLog) + ` t`,
		`INSERT INTO audit_tree (idx, hash) SELECT i, ` + hex64 + ` FROM ` + series(int(stored)) + ` t`,
		fmt.Sprintf(`UPDATE economy SET audit_seq = %d, audit_head = '%064x'`, historyLog, historyLog-1),
	} {
		if _, err := db.Exec(ctx, q); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	a := sqlstore.NewAudit(db)
	f, err := audit.LoadFrontier(historyLog+1, treeReader{ctx: ctx, a: a})
	if err != nil {
		b.Fatal(err)
	}
	note, err := signer.Sign(audit.Checkpoint{Origin: signer.Origin(), Size: historyLog + 1, Root: f.Root()})
	if err != nil {
		b.Fatal(err)
	}
	head, _ := audit.ParseHash(fmt.Sprintf("%064x", historyLog-1))
	if err := a.SaveCheckpoint(ctx, "latest", store.Checkpoint{Size: historyLog + 1, Root: audit.Hash(f.Root()), Chain: head,
		Note: note, At: time.Now()}); err != nil {
		b.Fatal(err)
	}
	if db.Engine() == database.Postgres {
		if _, err := db.Exec(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
}

type treeReader struct {
	ctx context.Context
	a   sqlstore.Audit
}

func (t treeReader) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	hs, err := t.a.TreeHashes(t.ctx, idx)
	out := make([]tlog.Hash, len(hs))
	for i, h := range hs {
		out[i] = tlog.Hash(h)
	}
	return out, err
}
