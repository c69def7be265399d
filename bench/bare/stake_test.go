package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foundryhq/foundry/bench/bare/sqlcore"
)

// The originals whose results the stake's transaction must match.
const (
	origMove        = "usecase.App.move (services/ledger/internal/usecase/move.go)"
	origAccountName = "credit.Account.Name (services/ledger/internal/credit/journal.go)"
)

// TestStakeAuditEntryMirrorsMove pins what the stake's transaction writes
// against the originals: the journal lines' account names
// (credit.Account.Name) and the queued audit entry, whose attributes bare
// builds inside stakeTx as usecase.App.move does: the entry's id, the
// idea, each line's delta by account name, the unit. The expected values
// are worked out by hand from move.go (a stake passes no attributes of its
// own). It needs Postgres (bare speaks only Postgres): it runs when
// FOUNDRY_TEST_DATABASE_URL is set, in a database of its own holding the
// ledger's and the portfolio's schemas, migrated from the services'
// migration files.
func TestStakeAuditEntryMirrorsMove(t *testing.T) {
	url := os.Getenv("FOUNDRY_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("FOUNDRY_TEST_DATABASE_URL is not set: the stake's audit entry is pinned against Postgres")
	}
	ctx := context.Background()
	pool := goldenDatabase(t, url)
	// A contributor whose id holds ':' (a GitHub login), so the staked
	// account's name escapes it; 10 CC available; an idea whose id holds
	// ':' too.
	const who, idea, token = "github:ada", "idea:1", "token-of-ada"
	sum := sha256.Sum256([]byte(token))
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO ledger.contributors (id, handle, trust_level, created_at) VALUES ($1, 'ada', 'github', 0)`, []any{who}},
		{`INSERT INTO ledger.sessions (token_hash, contributor_id, created_at) VALUES ($1, $2, 0)`, []any{hex.EncodeToString(sum[:]), who}},
		// credit.Available("github:ada").Name(), as TestAccountNames has it.
		{`INSERT INTO ledger.cc_accounts (account, bucket, contributor_id, balance) VALUES ('available:github:ada', 'available', $1, 10000000)`,
			[]any{who}},
		{`INSERT INTO portfolio.ideas (id, name, description, potential_value, estimated_cost, actual_value, actual_cost, confidence,
			resistance_risk, stage, manifestation_status, score, created_at, updated_at)
			VALUES ($1, 'an idea', '', 10, 2, 0, 0, 0.5, 0.5, 'specced', 'none', 2, 0, 0)`, []any{idea}},
	} {
		if _, err := pool.Exec(ctx, stmt.sql, stmt.args...); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}

	req := httptest.NewRequest(http.MethodPost, "/api/cc/stake",
		strings.NewReader(`{"contributor_id": "github:ada", "idea_id": "idea:1", "amount_cc": 2.5}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	(&server{core: sqlcore.New(pool)}).routes().ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("the stake answered %d: %s", rec.Code, rec.Body)
	}

	var entryID, kind, contributor, entryIdea string
	var amount int64
	if err := pool.QueryRow(ctx, `SELECT id, kind, contributor_id, idea_id, amount FROM ledger.cc_entries`).
		Scan(&entryID, &kind, &contributor, &entryIdea, &amount); err != nil {
		t.Fatalf("read the journal entry: %v", err)
	}
	if kind != "stake" || contributor != who || entryIdea != idea || amount != 2_500_000 {
		t.Errorf("journal entry: %s by %s on %s of %d, want a stake by %s on %s of 2500000", kind, contributor, entryIdea, amount, who, idea)
	}

	// credit.Transfer(KindStake, Available(who), Staked(who, idea), 2.5 CC)'s lines, named by credit.Account.Name.
	lines := map[string]int64{}
	rows, err := pool.Query(ctx, `SELECT account, delta FROM ledger.cc_lines WHERE entry_id = $1`, entryID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			account string
			delta   int64
		)
		if err := rows.Scan(&account, &delta); err != nil {
			t.Fatal(err)
		}
		lines[account] = delta
	}
	rows.Close()
	wantLines := map[string]int64{"available:github:ada": -2_500_000, "staked:github%3Aada:idea:1": 2_500_000}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("%s: the journal lines are %v, Foundry's %v", origAccountName, lines, wantLines)
	}

	var (
		queued                    *string
		auditKind, actor, subject string
		auditAmount               int64
		attrsJSON                 string
		attrs                     map[string]string
	)
	if err := pool.QueryRow(ctx, `SELECT entry_id, kind, actor, subject, amount, attrs FROM ledger.audit_queue`).
		Scan(&queued, &auditKind, &actor, &subject, &auditAmount, &attrsJSON); err != nil {
		t.Fatalf("read the queued audit entry: %v", err)
	}
	if err := json.Unmarshal([]byte(attrsJSON), &attrs); err != nil {
		t.Fatalf("the audit attributes %q: %v", attrsJSON, err)
	}
	if queued == nil || *queued != entryID || auditKind != "stake" || actor != who || subject != who || auditAmount != 2_500_000 {
		t.Errorf("%s: the audit entry records %v as %s by %s of %s for %d, want %s as stake by %s of %s for 2500000",
			origMove, queued, auditKind, actor, subject, auditAmount, entryID, who, who)
	}
	want := map[string]string{
		"entry_id":                        entryID,
		"idea_id":                         idea,
		"line:available:github:ada":       "-2500000",
		"line:staked:github%3Aada:idea:1": "2500000",
		"unit":                            "micro_cc",
	}
	if !reflect.DeepEqual(attrs, want) {
		t.Errorf("%s: the stake's audit attributes are\n%v\nFoundry's\n%v", origMove, attrs, want)
	}
}

// goldenDatabase creates a database of its own on the server url names,
// with the ledger's and the portfolio's schemas migrated from the
// services' migration files (the common ones and Postgres's own, in
// version order), and drops it when the test ends.
func goldenDatabase(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect to %s: %v", os.Getenv("FOUNDRY_TEST_DATABASE_URL"), err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "bare_golden_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Database = name
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		if _, err := admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		_ = admin.Close(context.Background())
	})
	for _, schema := range []string{"ledger", "portfolio"} {
		dir := filepath.Join("..", "..", "services", schema, "internal", "store", "migrations")
		var files []string
		for _, sub := range []string{"common", "postgres"} {
			found, err := filepath.Glob(filepath.Join(dir, sub, "*.sql"))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, found...)
		}
		if len(files) == 0 {
			t.Fatalf("no migrations in %s", dir)
		}
		sort.Slice(files, func(i, j int) bool { return filepath.Base(files[i]) < filepath.Base(files[j]) })
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema+`; SET search_path = `+schema); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			sql, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, string(sql)); err != nil {
				t.Fatalf("migration %s: %v", f, err)
			}
		}
		if _, err := conn.Exec(ctx, `RESET search_path`); err != nil {
			t.Fatal(err)
		}
		conn.Release()
	}
	return pool
}
