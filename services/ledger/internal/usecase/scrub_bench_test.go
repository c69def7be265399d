package usecase_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// BenchmarkScrubCycle measures one whole cycle of the scrubber, its steps
// taken back to back (no pauses), over a sound log of
// FOUNDRY_BENCH_SCRUB_ENTRIES entries (100 000 by default; the numbers in
// docs/performance.md are for 1 000 000): deposits and their spread fees
// of 1 000 contributors, so half the entries are movements whose journal
// entry and two lines the cycle compares, with the tree and a signed
// checkpoint. ms/cycle divided by FOUNDRY_AUDIT_SCRUB_CYCLE is the share
// of the database's time the scrubber takes.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... FOUNDRY_BENCH_SCRUB_ENTRIES=1000000 \
//	  go test ./services/ledger/internal/usecase -run '^$' -bench ScrubCycle -benchtime 1x -timeout 1h
func BenchmarkScrubCycle(b *testing.B) {
	entries := 100_000
	if v := os.Getenv("FOUNDRY_BENCH_SCRUB_ENTRIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("FOUNDRY_BENCH_SCRUB_ENTRIES=%q: want a whole number of at least 2", v)
		}
		entries = n &^ 1
	}
	for _, engine := range []database.Engine{database.Postgres, database.SQLite} {
		b.Run(fmt.Sprintf("%s/entries=%d", engine, entries), func(b *testing.B) {
			if engine == database.Postgres && dbtest.PostgresURL() == "" {
				b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
			}
			db := dbtest.Open(b, engine, "ledger", store.Migrations())
			began := time.Now()
			seedScrubLog(b, db, entries)
			b.Logf("seeded %d entries in %s", entries, time.Since(began).Round(time.Second))
			app := usecase.New(db, repos, usecase.Config{AuditSigner: testSigner, Ideas: ideas{}})
			ctx := context.Background()
			var steps int
			b.ResetTimer()
			for range b.N {
				for {
					step, err := app.Scrub(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if len(step.Found) > 0 {
						b.Fatalf("a sound log: %+v", step.Found)
					}
					steps++
					if step.Completed {
						break
					}
				}
			}
			b.StopTimer()
			perCycle := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(perCycle.Milliseconds()), "ms/cycle")
			b.ReportMetric(float64(steps)/float64(b.N), "steps/cycle")
			b.ReportMetric(float64(perCycle.Microseconds())/float64(steps)*float64(b.N), "µs/step")
		})
	}
}

// seedScrubLog writes a sound log of n entries: n/2 deposits of 1 CC from
// the issuance account to one of 1 000 contributors, each a journal entry
// with its two lines and two audit entries (the deposit's and its spread
// fee's), the chain, the Merkle tree, the balances, the supply and a
// checkpoint signed with testSigner.
func seedScrubLog(b *testing.B, db *database.DB, n int) {
	ctx := context.Background()
	const contributors = 1000
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var (
		prev     = audit.Genesis
		frontier audit.Frontier
		tree     = map[int64]audit.Hash{}
		balances = map[string]int64{}
	)
	for i, h := range frontier.Append(tlog.Hash(audit.LeafHash(audit.GenesisRecord))) {
		tree[int64(i)] = audit.Hash(h)
	}
	flush := func(table, columns string, rows [][]any) {
		if len(rows) == 0 {
			return
		}
		per := len(rows[0])
		const chunk = 500
		for from := 0; from < len(rows); from += chunk {
			part := rows[from:min(from+chunk, len(rows))]
			values := make([]string, len(part))
			args := make([]any, 0, per*len(part))
			for i, r := range part {
				values[i] = "(" + database.Placeholders(len(args)+1, per) + ")"
				args = append(args, r...)
			}
			if _, err := db.Exec(ctx, `INSERT INTO `+table+` (`+columns+`) VALUES `+strings.Join(values, ", "), args...); err != nil {
				b.Fatalf("seed %s: %v", table, err)
			}
		}
	}
	var audits, journal, lines [][]any
	seq := int64(0)
	add := func(e audit.Entry, entryID string) {
		seq++
		e.Seq = seq
		rec := audit.Seal(prev, e)
		prev = rec.Hash
		first := tlog.StoredHashIndex(0, frontier.Size())
		for i, h := range frontier.Append(tlog.Hash(audit.LeafHash(rec.Encoded))) {
			tree[first+int64(i)] = audit.Hash(h)
		}
		var link any
		if entryID != "" {
			link = entryID
		}
		attrs, err := json.Marshal(e.Attrs)
		if err != nil {
			b.Fatal(err)
		}
		audits = append(audits, []any{e.Seq, e.Kind, database.Micros(e.At), e.Actor, e.Subject, e.Amount, string(attrs),
			hex.EncodeToString(rec.Encoded), rec.PrevHash.String(), rec.Hash.String(), link})
	}
	for i := range n / 2 {
		c := fmt.Sprintf("c%04d", i%contributors)
		id := fmt.Sprintf("e-%09d", i)
		t := at.Add(time.Duration(i) * time.Millisecond)
		acct := "available:" + c
		journal = append(journal, []any{id, "deposit", c, int64(cc), 0, database.Micros(t)})
		lines = append(lines, []any{id, "issuance", "issuance", nil, int64(-cc)}, []any{id, acct, "available", c, int64(cc)})
		balances[acct] += cc
		balances["issuance"] -= cc
		add(audit.Entry{Kind: "deposit", At: t, Actor: "admin", Subject: c, Amount: cc, Attrs: map[string]string{"entry_id": id,
			"unit": "micro_cc", audit.LineAttr("issuance"): strconv.Itoa(-cc), audit.LineAttr(acct): strconv.Itoa(cc)}}, id)
		add(audit.Entry{Kind: "spread_fee", At: t, Actor: "admin", Subject: c, Amount: 5000, Attrs: map[string]string{"entry_id": id,
			"unit": "micro_usd", "movement": "deposit"}}, "")
		if len(audits) >= 20_000 {
			flush("audit_entries", "seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash, entry_id", audits)
			flush("cc_entries", "id, kind, contributor_id, amount, audit_seq, created_at", journal)
			audits, journal = audits[:0], journal[:0]
		}
	}
	flush("audit_entries", "seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash, entry_id", audits)
	flush("cc_entries", "id, kind, contributor_id, amount, audit_seq, created_at", journal)
	var accounts [][]any
	for acct, bal := range balances {
		bucket, owner, _ := strings.Cut(acct, ":")
		var c any
		if owner != "" {
			c = owner
		}
		accounts = append(accounts, []any{acct, bucket, c, bal})
	}
	flush("cc_accounts", "account, bucket, contributor_id, balance", accounts)
	for from := 0; from < len(lines); from += 20_000 {
		flush("cc_lines", "entry_id, account, bucket, contributor_id, delta", lines[from:min(from+20_000, len(lines))])
	}
	var hashes [][]any
	for idx, h := range tree {
		hashes = append(hashes, []any{idx, h.String()})
		if len(hashes) >= 20_000 {
			flush("audit_tree", "idx, hash", hashes)
			hashes = hashes[:0]
		}
	}
	flush("audit_tree", "idx, hash", hashes)
	if _, err := db.Exec(ctx, `UPDATE economy SET audit_seq = $1, audit_head = $2, outstanding_cc = $3`, seq, prev.String(),
		-balances["issuance"]); err != nil {
		b.Fatal(err)
	}
	note, err := testSigner.Sign(audit.Checkpoint{Origin: testSigner.Origin(), Size: frontier.Size(), Root: frontier.Root()})
	if err != nil {
		b.Fatal(err)
	}
	if err := sqlstore.NewAudit(db).SaveCheckpoint(ctx, "latest", store.Checkpoint{Size: frontier.Size(), Root: audit.Hash(frontier.Root()),
		Chain: prev, Note: note, At: time.Now()}); err != nil {
		b.Fatal(err)
	}
	if db.Engine() == database.Postgres {
		if _, err := db.Exec(ctx, `ANALYZE`); err != nil {
			b.Fatal(err)
		}
	}
}
