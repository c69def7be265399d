package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// The ledger against a writer of its database, black-box through the
// gateway: the database is edited while Foundry runs, as someone with
// write access to it would, and the scrubber (a short cycle here), the
// reports and the repair are watched from outside.

// integrityFlags run the scrubber on a 2 s cycle (a small log is checked
// whole every fifth of a second) and the monitor every second.
var integrityFlags = []string{"-audit-scrub-cycle=2s", "-monitor-interval=1s", "-rate-poll-interval=0"}

// integrityFound waits (at most a few cycles) until the economy has left
// normal and returns the verification answer then.
func integrityFound(t *testing.T, sys *allinonetest.System) auditLogVerify {
	t.Helper()
	var v auditLogVerify
	require.Eventually(t, func() bool {
		v = auditVerify(t, sys, false)
		return !v.Valid && integrityMode(t, sys) != "normal"
	}, 20*time.Second, 50*time.Millisecond, "the scrubber finds it within a cycle")
	return v
}

// integrityMode is the economy's mode.
func integrityMode(t *testing.T, sys *allinonetest.System) string {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
	requireStatus(t, http.StatusOK, r)
	return r.JSON["mode"].(string)
}

// integrityEdit runs statements on the running system's ledger database,
// each changing at least one row.
func integrityEdit(t *testing.T, sys *allinonetest.System, statements ...string) {
	t.Helper()
	db := auditCLILedgerDB(t, sys)
	defer db.Close()
	for _, s := range statements {
		n, err := db.Exec(context.Background(), s)
		require.NoError(t, err, s)
		require.Positive(t, n, s)
	}
}

// integrityEconomy is a running economy with a contributor's deposits, a
// stake and an unstake (seq 1 to 6), verified and scrubbed clean.
func integrityEconomy(t *testing.T, sys *allinonetest.System) (creditUser, string) {
	t.Helper()
	ada := creditRegister(t, sys, "ada")
	idea := creditIdea(t, sys, "solar kettle")
	for _, ref := range []string{"wire-1", "wire-2"} {
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, ref))
	}
	stake := request(t, http.MethodPost, sys.URL("/api/cc/stake"), map[string]any{"contributor_id": ada.ID, "idea_id": idea,
		"amount_cc": 50}, ada.auth())
	requireStatus(t, http.StatusCreated, stake)
	unstake := request(t, http.MethodPost, sys.URL("/api/cc/unstake"), map[string]any{"contributor_id": ada.ID, "idea_id": idea,
		"amount_cc": 5}, ada.auth())
	requireStatus(t, http.StatusOK, unstake)
	waitSequenced(t, sys)
	require.Eventually(t, func() bool {
		v := auditVerify(t, sys, false)
		return v.Valid && v.Scrub != nil && v.Scrub.LastCycle != nil && v.Scrub.LastCycle.ThroughSeq >= 6
	}, 20*time.Second, 50*time.Millisecond, "a whole scrub cycle over the economy, clean")
	return ada, idea
}

// integrityHolds checks that a repaired economy stays repaired: ten of the
// monitor's checks (five minutes' worth at its default interval) and at
// least one whole scrub cycle later it is normal and healthy, a stake
// succeeds and the full walk is valid.
func integrityHolds(t *testing.T, sys *allinonetest.System, ada creditUser, idea string) {
	t.Helper()
	start := auditVerify(t, sys, false).Scrub.LastCycle.Cycle
	// The monitor's report is of its last check, which may have begun
	// before the repair: the first one to trust begins a whole interval
	// (1 s) after it.
	repaired := time.Now()
	require.Eventually(t, func() bool {
		c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
		requireStatus(t, http.StatusOK, c)
		at, err := time.Parse(time.RFC3339Nano, c.JSON["checked_at"].(string))
		require.NoError(t, err)
		return at.After(repaired.Add(time.Second))
	}, 20*time.Second, 50*time.Millisecond, "a check of the monitor's after the repair")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
		requireStatus(t, http.StatusOK, c)
		require.Equal(t, "normal", c.JSON["mode"], "%s", c.Raw)
		require.Equal(t, true, c.JSON["healthy"], "%s", c.Raw)
		time.Sleep(500 * time.Millisecond)
	}
	v := auditVerify(t, sys, false)
	require.Greater(t, v.Scrub.LastCycle.Cycle, start, "the scrubber went over everything again")
	require.True(t, v.Valid, "%+v", v)
	stake := request(t, http.MethodPost, sys.URL("/api/cc/stake"), map[string]any{"contributor_id": ada.ID, "idea_id": idea,
		"amount_cc": 1}, ada.auth())
	requireStatus(t, http.StatusCreated, stake)
	waitSequenced(t, sys)
	require.True(t, auditVerify(t, sys, true).Valid)
	require.Equal(t, "normal", integrityMode(t, sys))
}

// integrityRepair is the administrator's repair, then the unfreeze a
// freeze waits for.
func integrityRepair(t *testing.T, sys *allinonetest.System) response {
	t.Helper()
	rep := request(t, http.MethodPost, sys.URL("/api/audit/repair"), map[string]any{}, creditAdmin)
	requireStatus(t, http.StatusOK, rep)
	require.Equal(t, []any{}, rep.JSON["open_findings"], "%s", rep.Raw)
	if rep.JSON["mode"] == "frozen" {
		requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"),
			map[string]any{"reason": "repaired"}, creditAdmin))
	}
	return rep
}

// TestLedgerIntegrityEditedEntry: an edit of any column of an old,
// verified audit entry is found within a scrub cycle; the economy leaves
// normal, GET /api/audit/verify says valid: false with that seq, foundry
// audit verify --entry of that seq fails; a repair heals it for good.
func TestLedgerIntegrityEditedEntry(t *testing.T) {
	t.Parallel()
	for column, edit := range map[string]string{
		"subject": `UPDATE audit_entries SET subject = 'mallory' WHERE seq = 1`,
		"amount":  `UPDATE audit_entries SET amount = 1 WHERE seq = 1`,
		"attrs":   `UPDATE audit_entries SET attrs = '{"unit":"micro_cc"}' WHERE seq = 1`,
	} {
		t.Run(column, func(t *testing.T) {
			t.Parallel()
			eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
				ada, idea := integrityEconomy(t, sys)
				integrityEdit(t, sys, edit)
				v := integrityFound(t, sys)
				require.NotNil(t, v.FirstDivergent, "%+v", v)
				require.Equal(t, 1, *v.FirstDivergent, "%+v", v)
				require.NotEqual(t, "normal", integrityMode(t, sys))

				env := map[string]string{"FOUNDRY_URL": sys.BaseURL, "XDG_CONFIG_HOME": t.TempDir()}
				r, doc := auditCLIVerify(t, env, "--entry", "1")
				require.Equal(t, cli.ExitFailed, r.code, r.stderr)
				entry := doc["log"].(map[string]any)["entries"].([]any)[0].(map[string]any)
				require.Equal(t, false, entry["included"], "the entry shown is not the one the log signed: %v", entry)

				rep := integrityRepair(t, sys)
				require.Len(t, rep.JSON["repaired_breaks"], 1, "%s", rep.Raw)
				integrityHolds(t, sys, ada, idea)
			}, integrityFlags...)
		})
	}
}

// TestLedgerIntegrityMintedCC: a consistent edit of the journal that mints
// 1 000 CC (both lines, both balances, the entry's amount, the supply) is
// found within a scrub cycle; the economy freezes and the minted CC cannot
// be withdrawn; the repair's correction takes them back.
func TestLedgerIntegrityMintedCC(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada, idea := integrityEconomy(t, sys)
		before := creditBalances(t, sys, ada.ID)
		db := auditCLILedgerDB(t, sys)
		var entry string
		require.NoError(t, db.QueryRow(context.Background(), `SELECT entry_id FROM audit_entries WHERE seq = 1`).Scan(&entry))
		db.Close()
		const minted = 1000_000000
		integrityEdit(t, sys,
			fmt.Sprintf(`UPDATE cc_lines SET delta = delta + %d WHERE entry_id = '%s' AND account = 'available:%s'`, minted, entry, ada.ID),
			fmt.Sprintf(`UPDATE cc_lines SET delta = delta - %d WHERE entry_id = '%s' AND account = 'issuance'`, minted, entry),
			fmt.Sprintf(`UPDATE cc_accounts SET balance = balance + %d WHERE account = 'available:%s'`, minted, ada.ID),
			fmt.Sprintf(`UPDATE cc_accounts SET balance = balance - %d WHERE account = 'issuance'`, minted),
			fmt.Sprintf(`UPDATE cc_entries SET amount = amount + %d WHERE id = '%s'`, minted, entry),
			fmt.Sprintf(`UPDATE economy SET outstanding_cc = outstanding_cc + %d`, minted))
		integrityFound(t, sys)
		require.Equal(t, "frozen", integrityMode(t, sys))
		w := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": ada.ID, "amount_cc": 900}, ada.auth())
		requireStatus(t, http.StatusBadRequest, w)
		require.Equal(t, "frozen", w.JSON["detail"])

		rep := integrityRepair(t, sys)
		require.NotNil(t, rep.JSON["correction_entry_id"], "%s", rep.Raw)
		require.Equal(t, []any{entry}, rep.JSON["corrected_entries"])
		require.Equal(t, before, creditBalances(t, sys, ada.ID), "the minted CC are gone")
		integrityHolds(t, sys, ada, idea)
	}, integrityFlags...)
}

// TestLedgerIntegrityDeletedEntry: a deleted newest and a deleted middle
// audit entry are found, repaired (restored from the journal) and stay
// repaired — where the issue saw the economy frozen again within 3 s of
// every unfreeze.
func TestLedgerIntegrityDeletedEntry(t *testing.T) {
	t.Parallel()
	for name, seq := range map[string]int{"newest": 6, "middle": 3} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
				ada, idea := integrityEconomy(t, sys)
				integrityEdit(t, sys, `DELETE FROM audit_entries WHERE seq = `+strconv.Itoa(seq))
				integrityFound(t, sys)
				// The monitor's reconciliation may see first that a journal
				// entry is recorded by no audit entry, which names no seq; the
				// scrubber's walk names the deleted one within its cycle.
				var v auditLogVerify
				require.Eventually(t, func() bool {
					v = auditVerify(t, sys, false)
					return v.FirstDivergent != nil
				}, 20*time.Second, 50*time.Millisecond, "the scrubber names the deleted seq")
				require.Equal(t, seq, *v.FirstDivergent, "the deleted seq, not a later one: %+v", v)
				require.Eventually(t, func() bool { return integrityMode(t, sys) == "frozen" }, 20*time.Second, 50*time.Millisecond,
					"the movement the log no longer records freezes the economy")

				rep := integrityRepair(t, sys)
				require.Equal(t, []any{float64(seq)}, rep.JSON["restored_seqs"], "%s", rep.Raw)
				integrityHolds(t, sys, ada, idea)
			}, integrityFlags...)
		})
	}
}

// TestLedgerNeedsItsKeyBesideOthers: a ledger that runs beside other
// Foundry processes (it names the portfolio's address) and has no
// FOUNDRY_AUDIT_SIGNING_KEY refuses to start: each replica would sign with
// a key of its own and take the others' checkpoints for forgeries.
func TestLedgerNeedsItsKeyBesideOthers(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		p := allinonetest.NewProc(t, "foundry", "ledger", allinonetest.NewStorage(t, engine), "-portfolio-addr=127.0.0.1:1").
			WithEnv("FOUNDRY_AUDIT_SIGNING_KEY=")
		p.Launch()
		exited, err := p.Wait(60 * time.Second)
		require.True(t, exited, "the ledger must not start")
		require.Error(t, err)
		require.Contains(t, p.Output(), "FOUNDRY_AUDIT_SIGNING_KEY (-audit-signing-key) is not set, and this ledger runs beside "+
			"other Foundry processes (the portfolio service at 127.0.0.1:1)")
	})
}

// witnessServe runs foundry audit witness in this process, named name,
// witnessing the log whose verifier key is logKey, until the test ends; it
// returns the witness's URL and verifier key.
func witnessServe(t *testing.T, name, logKey string) (string, string) {
	t.Helper()
	wskey, wvkey := newAuditKey(t, name)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "witness.key")
	require.NoError(t, os.WriteFile(keyFile, []byte("FOUNDRY_AUDIT_SIGNING_KEY="+wskey+"\n"), 0o600))
	addr := allinonetest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cli.Execute(ctx, []string{"audit", "witness", "--key-file", keyFile, "--state", filepath.Join(dir, "state.json"),
			"--log", logKey, "--listen", addr}, nil, io.Discard, io.Discard, func(string) string { return "" })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "the witness listens")
	return "http://" + addr, wvkey
}

// witnessCosigned waits until the checkpoint served is of the tree of size
// records and carries a signature line by the witness named name, and
// returns it.
func witnessCosigned(t *testing.T, sys *allinonetest.System, name string, size int64) string {
	t.Helper()
	var served string
	require.Eventually(t, func() bool {
		r := request(t, http.MethodGet, sys.URL("/api/audit/checkpoint"), nil)
		served = string(r.Raw)
		return r.Status == http.StatusOK && strings.Contains(served, fmt.Sprintf("\n%d\n", size)) &&
			strings.Contains(served, "\n— "+name+" ")
	}, 20*time.Second, 50*time.Millisecond, "the ledger serves the latest checkpoint, cosigned by the witness")
	return served
}

// TestLedgerWitnessRefusesAFork: the ledger asks a witness (foundry audit
// witness) to cosign its checkpoints and serves them cosigned; a client
// that requires the witness verifies them. A writer who holds the log's
// own signing key forks the history (an entry rewritten, the tree rebuilt,
// a checkpoint signed with the real key) and serves it: the witness refuses
// to cosign the fork, the ledger records that as a finding, and a client
// that never saw the log but requires the witness refuses it.
func TestLedgerWitnessRefusesAFork(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		skey, vkey := newAuditKey(t, "foundry-audit")
		wurl, wvkey := witnessServe(t, "e2e-witness", vkey)
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine), "-audit-signing-key="+skey,
			"-audit-witnesses="+wvkey+"@"+wurl, "-http-addr="+allinonetest.FreeAddr(t), "-grpc-addr="+allinonetest.FreeAddr(t),
			"-rate-poll-interval=0", "-audit-scrub-cycle=0")
		ada := creditRegister(t, sys, "ada")
		for _, ref := range []string{"wire-1", "wire-2", "wire-3"} {
			requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, ref))
		}
		size := auditCLISequenced(t, sys)
		witnessCosigned(t, sys, "e2e-witness", size)

		env := map[string]string{"FOUNDRY_URL": sys.BaseURL, "XDG_CONFIG_HOME": t.TempDir()}
		r, doc := auditCLIVerify(t, env, "--witness", wvkey, "--entry", "3")
		require.Equal(t, cli.ExitOK, r.code, r.stderr)
		require.Equal(t, []any{wvkey}, doc["log"].(map[string]any)["witnesses"])

		// The fork, with the log's own key, served as the witnessed checkpoint.
		sys.Stop()
		auditCLIRewrite(t, sys, 3, auditCLITamper{rebuildTree: true, resignWith: skey})
		db := auditCLILedgerDB(t, sys)
		var forged string
		require.NoError(t, db.QueryRow(context.Background(), `SELECT note FROM audit_checkpoints WHERE name = 'latest'`).Scan(&forged))
		n, err := db.Exec(context.Background(), `UPDATE audit_checkpoints SET note = $1 WHERE name = 'witnessed'`, forged)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		db.Close()

		// The witness refuses it however it is asked: from the size it
		// cosigned (the same size, another root).
		body := fmt.Sprintf("old %d\n\n%s", size, forged)
		resp, err := http.Post(wurl+"/add-checkpoint", "text/plain", strings.NewReader(body))
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Contains(t, []int{http.StatusConflict, http.StatusUnprocessableEntity}, resp.StatusCode,
			"the witness does not cosign a checkpoint that does not extend the one it cosigned")

		sys.Restart()
		fresh := map[string]string{"FOUNDRY_URL": sys.BaseURL, "XDG_CONFIG_HOME": t.TempDir()}
		r, doc = auditCLIVerify(t, fresh, "--witness", wvkey)
		require.Equal(t, cli.ExitFailed, r.code, r.stderr)
		log := doc["log"].(map[string]any)
		require.Equal(t, false, log["valid"])
		require.Contains(t, log["reason"], "is not cosigned by the witness e2e-witness", "a client that never saw the log")

		// The ledger asks the witness too, is refused, and stops.
		require.Eventually(t, func() bool {
			v := auditVerify(t, sys, false)
			return !v.Valid && strings.Contains(v.Reason, "refuses the latest checkpoint")
		}, 20*time.Second, 50*time.Millisecond)
		require.Equal(t, "read_only", integrityMode(t, sys))
	})
}
