package e2e_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// The credit economy, black-box through the gateway: deposits, the rate and
// the supply, stakes and unstakes, withdrawals, idempotency, the audit
// chain, the oracle breaker and the emergency freeze. The rate is the
// default fixed 100 CC per USD with the posted 1 % spread: buy 99.5, sell
// 100.5. The economy monitor is off so the mode changes only by the
// requests of each test.

// creditAdmin is the administrator key header.
const creditAdmin = "X-API-Key: " + allinonetest.AdminKey

// creditFlags keep each system's economy deterministic: no monitor changing
// the mode, the fixed rate read only at startup.
var creditFlags = []string{"-monitor-interval=0", "-rate-poll-interval=0"}

// creditUser is a registered contributor.
type creditUser struct {
	ID    string
	Token string
}

// auth is the user's Authorization header.
func (u creditUser) auth() string { return "Authorization: Bearer " + u.Token }

// creditBal are a contributor's balances.
type creditBal struct {
	Available float64 `json:"available_cc"`
	Staked    float64 `json:"staked_cc"`
	Cooling   float64 `json:"cooling_cc"`
}

// creditAuditEntry is one link of the audit chain. Amount is in whole
// units of Unit (cc, usd, cc_per_usd; "" when the entry moves nothing); the
// chain keeps micro-units, which Attrs["unit"] names.
type creditAuditEntry struct {
	Seq      int               `json:"seq"`
	Kind     string            `json:"kind"`
	Actor    string            `json:"actor"`
	Subject  string            `json:"subject"`
	Amount   float64           `json:"amount"`
	Unit     string            `json:"unit"`
	Attrs    map[string]string `json:"attrs"`
	PrevHash string            `json:"prev_hash"`
	Hash     string            `json:"hash"`
}

func creditRegister(t *testing.T, sys *allinonetest.System, handle string) creditUser {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/onboarding/register"), map[string]any{"handle": handle}, anonymous)
	requireStatus(t, http.StatusCreated, r)
	return creditUser{ID: r.JSON["contributor_id"].(string), Token: r.JSON["session_token"].(string)}
}

func creditIdea(t *testing.T, sys *allinonetest.System, name string) string {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": name, "potential_value": 100, "estimated_cost": 10})
	requireStatus(t, http.StatusCreated, r)
	return r.JSON["id"].(string)
}

func creditDeposit(t *testing.T, sys *allinonetest.System, contributorID string, usd float64, reference string) response {
	t.Helper()
	return request(t, http.MethodPost, sys.URL("/api/cc/deposit"),
		map[string]any{"contributor_id": contributorID, "amount_usd": usd, "reference": reference}, creditAdmin)
}

func creditBalances(t *testing.T, sys *allinonetest.System, contributorID string) creditBal {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/cc/balances/"+contributorID), nil)
	requireStatus(t, http.StatusOK, r)
	require.Equal(t, contributorID, r.JSON["contributor_id"])
	var b creditBal
	require.NoError(t, json.Unmarshal(r.Raw, &b))
	return b
}

func creditSupply(t *testing.T, sys *allinonetest.System) map[string]any {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/cc/supply"), nil)
	requireStatus(t, http.StatusOK, r)
	return r.JSON
}

// creditAudit reads the whole chain, newest first, and its total, and
// checks the chaining of every link. It first waits until the sequencer
// has integrated every movement's entries, so the chain shows each
// movement made before the call (and a count taken before a refused
// request is compared with one that would show what it wrote).
func creditAudit(t *testing.T, sys *allinonetest.System) ([]creditAuditEntry, int) {
	t.Helper()
	waitSequenced(t, sys)
	return creditAuditNow(t, sys)
}

// creditAuditNow is creditAudit without the wait: the log as it is, with
// whatever waits in the queue left out.
func creditAuditNow(t *testing.T, sys *allinonetest.System) ([]creditAuditEntry, int) {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/audit?limit=500"), nil)
	_, page := listPage(t, r, "entries")
	var body struct {
		Entries []creditAuditEntry `json:"entries"`
		Total   int
	}
	require.NoError(t, json.Unmarshal(r.Raw, &body))
	require.NotNil(t, body.Entries, "an empty chain is [], not null: %s", r.Raw)
	body.Total = int(page["total"].(float64))
	require.Equal(t, wantPage(500, 0, body.Total, false), page, "one page holds the whole chain: %s", r.Raw)
	require.Len(t, body.Entries, body.Total, "one page holds the whole chain")
	for i, e := range body.Entries {
		require.Equal(t, body.Total-i, e.Seq, "newest first, no gap")
		require.Regexp(t, `^[0-9a-f]{64}$`, e.Hash)
		if i+1 < len(body.Entries) {
			require.Equal(t, body.Entries[i+1].Hash, e.PrevHash, "entry %d chains to entry %d", e.Seq, e.Seq-1)
		} else {
			require.Equal(t, strings.Repeat("0", 64), e.PrevHash, "the first entry chains to zero")
		}
	}
	return body.Entries, body.Total
}

func creditAuditTotal(t *testing.T, sys *allinonetest.System) int {
	t.Helper()
	_, total := creditAudit(t, sys)
	return total
}

func creditKinds(entries []creditAuditEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Kind
	}
	return out
}

// creditVerify verifies the whole log (GET /api/audit/verify?full=true,
// the administrator's walk from the first entry: the incremental one
// starts where the last verification stopped) once every movement's
// entries are sequenced, and checks it is sound, covers checked entries
// and is verified against the latest signed checkpoint.
func creditVerify(t *testing.T, sys *allinonetest.System, checked int) {
	t.Helper()
	waitSequenced(t, sys)
	r := request(t, http.MethodGet, sys.URL("/api/audit/verify?full=true"), nil, creditAdmin)
	requireStatus(t, http.StatusOK, r)
	require.Equal(t, true, r.JSON["valid"], "body: %s", r.Raw)
	require.Equal(t, true, r.JSON["full"], "body: %s", r.Raw)
	require.Equal(t, 1.0, r.JSON["verified_from_seq"], "a full walk starts at the first entry: %s", r.Raw)
	require.Equal(t, float64(checked), r.JSON["entries_checked"], "body: %s", r.Raw)
	require.Equal(t, float64(checked+1), r.JSON["tree_size"], "the checkpoint's tree holds the genesis record and every entry: %s", r.Raw)
	require.Equal(t, 0.0, r.JSON["unsequenced_entries"], "body: %s", r.Raw)
	require.Nil(t, r.JSON["first_divergent_seq"])
	require.Nil(t, r.JSON["reason"])
}

// creditHistory returns a contributor's investment-history events and
// checks they come newest first, each naming its audit entry (audit_seq is
// 0 while the entry waits for the sequencer: creditHistory waits until
// none does).
func creditHistory(t *testing.T, sys *allinonetest.System, contributorID string) []map[string]any {
	t.Helper()
	waitSequenced(t, sys)
	r := request(t, http.MethodGet, sys.URL("/api/contributors/"+contributorID+"/investment-history"), nil)
	events, page := listPage(t, r, "events")
	require.Equal(t, contributorID, r.JSON["contributor_id"])
	require.Equal(t, wantPage(50, 0, len(events), false), page, "one page holds the whole history: %s", r.Raw)
	out := make([]map[string]any, len(events))
	prev := int(^uint(0) >> 1)
	for i, e := range events {
		out[i] = e
		seq := int(out[i]["audit_seq"].(float64))
		require.Positive(t, seq, "every movement's audit entry is sequenced: %s", r.Raw)
		require.Less(t, seq, prev, "newest first")
		prev = seq
	}
	return out
}

func creditEventKinds(events []map[string]any) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e["kind"].(string)
	}
	return out
}

// signedFreeze is a new emergency freeze that signer signs with secret, as
// docs/ledger.md has it: issued now, with a nonce of its own (16 random
// bytes), signed over signer_id|issued_at|nonce|reason (freezeBody). The
// ledger refuses a nonce it has seen before (403), so each freeze a test
// sends is made by a call of its own. Every e2e test signs its freezes here,
// but ledger_freeze_test.go's, which set the time and the nonce themselves.
func signedFreeze(secret, signer, reason string) map[string]any {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (it crashes the program instead)
	return freezeBody(secret, signer, time.Now(), hex.EncodeToString(nonce), reason)
}

// requireCreditDetail checks an error's status and that its detail says
// what it should.
func requireCreditDetail(t *testing.T, want int, r response, contains string) {
	t.Helper()
	requireStatus(t, want, r)
	require.Contains(t, r.JSON["detail"], contains, "body: %s", r.Raw)
}

// TestLedgerCreditMinting: deposits mint at the buy rate under the
// administrator key and are idempotent by reference; the rate and the
// supply keep CC backed; withdrawals burn at the sell rate; the
// Idempotency-Key replays a withdrawal's answer; every movement and spread
// fee is chained in the audit ledger.
func TestLedgerCreditMinting(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		bob := creditRegister(t, sys, "bob")

		t.Run("exchange rate: buy < mid < sell around 100 CC per USD with a 1 % spread", func(t *testing.T) {
			r := request(t, http.MethodGet, sys.URL("/api/cc/exchange-rate"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, 100.0, r.JSON["cc_per_usd"])
			require.Equal(t, 1.0, r.JSON["spread_pct"])
			require.Equal(t, 99.5, r.JSON["buy_rate"])
			require.Equal(t, 100.5, r.JSON["sell_rate"])
			require.Less(t, r.JSON["buy_rate"], r.JSON["cc_per_usd"])
			require.Less(t, r.JSON["cc_per_usd"], r.JSON["sell_rate"])
			require.InDelta(t, 1/100.0, r.JSON["usd_per_cc"], 1e-12)
			require.Equal(t, false, r.JSON["breaker_tripped"])
			require.Equal(t, "fixed", r.JSON["source"])
		})

		t.Run("supply before any deposit: nothing outstanding, ratio 1.0", func(t *testing.T) {
			s := creditSupply(t, sys)
			require.Equal(t, 0.0, s["total_cc_outstanding"])
			require.Equal(t, 0.0, s["treasury_value_usd"])
			require.Equal(t, 1.0, s["reserve_ratio"])
			require.Equal(t, "healthy", s["status"])
			require.Equal(t, "normal", s["mode"])
			require.Equal(t, 100.0, s["cc_per_usd"])
			require.InDelta(t, 0.01, s["exchange_rate"], 1e-12)
			entries, total := creditAudit(t, sys)
			require.Empty(t, entries)
			require.Zero(t, total)
		})

		t.Run("deposit needs the administrator key", func(t *testing.T) {
			body := map[string]any{"contributor_id": ada.ID, "amount_usd": 10, "reference": "wire-1"}
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/cc/deposit"), body, anonymous))
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/cc/deposit"), body, "X-API-Key: wrong"))
			// A contributor's session is a valid credential without the role.
			requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/cc/deposit"), body, ada.auth()))
			require.Equal(t, creditBal{}, creditBalances(t, sys, ada.ID), "nothing minted")
			require.Equal(t, 0.0, creditSupply(t, sys)["total_cc_outstanding"])
		})

		t.Run("deposit validation: 422 with field errors; unknown contributor: 404", func(t *testing.T) {
			for name, body := range map[string]map[string]any{
				"zero":       {"contributor_id": ada.ID, "amount_usd": 0, "reference": "v-1"},
				"negative":   {"contributor_id": ada.ID, "amount_usd": -5, "reference": "v-2"},
				"7 decimals": {"contributor_id": ada.ID, "amount_usd": 1.0000001, "reference": "v-3"},
			} {
				r := request(t, http.MethodPost, sys.URL("/api/cc/deposit"), body, creditAdmin)
				requireFieldError(t, r, "amount_usd")
				require.Contains(t, r.JSON["detail"], "amount_usd", name)
			}
			requireFieldError(t, request(t, http.MethodPost, sys.URL("/api/cc/deposit"),
				map[string]any{"contributor_id": ada.ID, "amount_usd": 10}, creditAdmin), "reference")
			requireFieldError(t, creditDeposit(t, sys, ada.ID, 10, "   "), "reference")
			requireFieldError(t, creditDeposit(t, sys, "", 10, "v-4"), "contributor_id")
			requireCreditDetail(t, http.StatusNotFound, creditDeposit(t, sys, "no-such-contributor", 10, "v-5"), "no-such-contributor")
			require.Equal(t, creditBal{}, creditBalances(t, sys, ada.ID))
			require.Zero(t, creditAuditTotal(t, sys), "nothing was recorded")
		})

		var first response
		t.Run("deposit: 201, minted at the buy rate with the spread kept", func(t *testing.T) {
			first = creditDeposit(t, sys, ada.ID, 10, "wire-1")
			requireStatus(t, http.StatusCreated, first)
			require.Equal(t, ada.ID, first.JSON["contributor_id"])
			require.Equal(t, 10.0, first.JSON["amount_usd"])
			require.Equal(t, 995.0, first.JSON["amount_cc"], "10 USD × 99.5")
			require.Equal(t, 99.5, first.JSON["buy_rate"])
			require.InDelta(t, 0.05, first.JSON["spread_usd"], 1e-9, "10 USD less 995 CC at the mid rate")
			require.Equal(t, false, first.JSON["duplicate"])
			require.Equal(t, "wire-1", first.JSON["reference"])
			require.Equal(t, creditBal{Available: 995}, creditBalances(t, sys, ada.ID))
		})

		t.Run("supply after the deposit: backed, ratio above 1", func(t *testing.T) {
			s := creditSupply(t, sys)
			require.Equal(t, 995.0, s["total_cc_outstanding"])
			require.Equal(t, 10.0, s["treasury_value_usd"])
			require.InDelta(t, 1000.0/995.0, s["reserve_ratio"], 1e-6)
			require.Greater(t, s["reserve_ratio"], 1.0)
			require.Equal(t, "healthy", s["status"])
			require.Equal(t, "normal", s["mode"])
			require.LessOrEqual(t, s["total_cc_outstanding"].(float64), s["treasury_value_usd"].(float64)/s["exchange_rate"].(float64)+1e-9,
				"total_cc_outstanding <= treasury_value_usd / exchange_rate")
		})

		t.Run("the same reference and body: 200 duplicate, nothing minted again", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			again := creditDeposit(t, sys, ada.ID, 10, "wire-1")
			requireStatus(t, http.StatusOK, again)
			require.Equal(t, true, again.JSON["duplicate"])
			require.Equal(t, 995.0, again.JSON["amount_cc"])
			require.Equal(t, 10.0, again.JSON["amount_usd"])
			require.Equal(t, ada.ID, again.JSON["contributor_id"])
			require.Equal(t, "wire-1", again.JSON["reference"])
			require.Equal(t, first.JSON["created_at"], again.JSON["created_at"], "the original deposit")
			require.Equal(t, creditBal{Available: 995}, creditBalances(t, sys, ada.ID))
			s := creditSupply(t, sys)
			require.Equal(t, 995.0, s["total_cc_outstanding"])
			require.Equal(t, 10.0, s["treasury_value_usd"])
			require.Equal(t, before, creditAuditTotal(t, sys))
		})

		t.Run("a duplicate describes the original deposit: its rate and spread", func(t *testing.T) {
			again := creditDeposit(t, sys, ada.ID, 10, "wire-1")
			requireStatus(t, http.StatusOK, again)
			require.Equal(t, true, again.JSON["duplicate"])
			require.Equal(t, first.JSON["buy_rate"], again.JSON["buy_rate"], "995 CC were minted at 99.5, not at 0")
			require.Equal(t, first.JSON["spread_usd"], again.JSON["spread_usd"])
		})

		t.Run("the same reference with another amount or contributor: 409", func(t *testing.T) {
			requireCreditDetail(t, http.StatusConflict, creditDeposit(t, sys, ada.ID, 11, "wire-1"), "wire-1")
			requireCreditDetail(t, http.StatusConflict, creditDeposit(t, sys, bob.ID, 10, "wire-1"), "wire-1")
			require.Equal(t, creditBal{Available: 995}, creditBalances(t, sys, ada.ID))
			require.Equal(t, creditBal{}, creditBalances(t, sys, bob.ID))
		})

		t.Run("withdraw is owner-only", func(t *testing.T) {
			body := map[string]any{"contributor_id": ada.ID, "amount_cc": 201}
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), body, anonymous))
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), body, "Authorization: Bearer "+strings.Repeat("0", 64)))
			requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), body, bob.auth()))
			// The administrator cannot move a contributor's CC.
			requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), body, creditAdmin))
			requireFieldError(t, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
				map[string]any{"contributor_id": ada.ID, "amount_cc": 0}, ada.auth()), "amount_cc")
			require.Equal(t, creditBal{Available: 995}, creditBalances(t, sys, ada.ID))
		})

		t.Run("withdraw burns at the sell rate and records the spread", func(t *testing.T) {
			r := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": ada.ID, "amount_cc": 201}, ada.auth())
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, ada.ID, r.JSON["contributor_id"])
			require.Equal(t, 201.0, r.JSON["amount_cc"])
			require.Equal(t, 2.0, r.JSON["amount_usd"], "201 CC / 100.5")
			require.Equal(t, 100.5, r.JSON["sell_rate"])
			require.InDelta(t, 0.01, r.JSON["spread_usd"], 1e-9, "2.01 USD at the mid rate less 2 USD paid")
			require.Equal(t, creditBal{Available: 794}, creditBalances(t, sys, ada.ID))
			s := creditSupply(t, sys)
			require.Equal(t, 794.0, s["total_cc_outstanding"])
			require.Equal(t, 8.0, s["treasury_value_usd"])
			require.Greater(t, s["reserve_ratio"], 1.0)
		})

		t.Run("withdrawing more than is available: 400", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			requireCreditDetail(t, http.StatusBadRequest, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
				map[string]any{"contributor_id": ada.ID, "amount_cc": 794.000001}, ada.auth()), "insufficient")
			requireCreditDetail(t, http.StatusBadRequest, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
				map[string]any{"contributor_id": bob.ID, "amount_cc": 1}, bob.auth()), "insufficient")
			require.Equal(t, creditBal{Available: 794}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before, creditAuditTotal(t, sys))
		})

		t.Run("Idempotency-Key: the same key and body replay the answer, once", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			body := map[string]any{"contributor_id": ada.ID, "amount_cc": 100.5}
			one := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), body, ada.auth(), "Idempotency-Key: payout-7")
			requireStatus(t, http.StatusOK, one)
			require.Equal(t, 1.0, one.JSON["amount_usd"])
			two := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), body, ada.auth(), "Idempotency-Key: payout-7")
			requireStatus(t, http.StatusOK, two)
			require.Equal(t, string(one.Raw), string(two.Raw), "the identical answer")
			require.Equal(t, one.JSON["created_at"], two.JSON["created_at"])
			require.Equal(t, creditBal{Available: 693.5}, creditBalances(t, sys, ada.ID), "burned once")
			require.Equal(t, before+2, creditAuditTotal(t, sys), "one withdrawal and its spread fee")

			other := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": ada.ID, "amount_cc": 50},
				ada.auth(), "Idempotency-Key: payout-7")
			requireFieldError(t, other, "Idempotency-Key")
			require.Equal(t, creditBal{Available: 693.5}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before+2, creditAuditTotal(t, sys))

			fresh := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), body, ada.auth(), "Idempotency-Key: payout-8")
			requireStatus(t, http.StatusOK, fresh)
			require.Equal(t, creditBal{Available: 593}, creditBalances(t, sys, ada.ID), "another key is another withdrawal")
		})

		t.Run("audit: every movement and spread fee, newest first, chained", func(t *testing.T) {
			entries, total := creditAudit(t, sys)
			require.Equal(t, 8, total)
			require.Equal(t, []string{"spread_fee", "withdraw", "spread_fee", "withdraw", "spread_fee", "withdraw", "spread_fee", "deposit"},
				creditKinds(entries))
			deposit, depositFee := entries[7], entries[6]
			require.Equal(t, 995.0, deposit.Amount, "whole CC")
			require.Equal(t, "cc", deposit.Unit)
			require.Equal(t, "micro_cc", deposit.Attrs["unit"], "the chain keeps micro-units")
			require.Equal(t, "wire-1", deposit.Attrs["reference"])
			require.Equal(t, ada.ID, deposit.Subject)
			require.Equal(t, "admin", deposit.Actor)
			require.Equal(t, 0.05, depositFee.Amount, "0.05 USD")
			require.Equal(t, "usd", depositFee.Unit)
			require.Equal(t, "micro_usd", depositFee.Attrs["unit"])
			require.Equal(t, "deposit", depositFee.Attrs["movement"])
			require.Equal(t, "100", depositFee.Attrs["spread_bp"])
			require.Equal(t, deposit.Attrs["entry_id"], depositFee.Attrs["entry_id"])
			withdraw, withdrawFee := entries[5], entries[4]
			require.Equal(t, 201.0, withdraw.Amount)
			require.Equal(t, "cc", withdraw.Unit)
			require.Equal(t, ada.ID, withdraw.Actor)
			require.Equal(t, 0.01, withdrawFee.Amount, "0.01 USD")
			require.Equal(t, "usd", withdrawFee.Unit)
			require.Equal(t, "withdraw", withdrawFee.Attrs["movement"])
			require.Equal(t, 0.005, entries[2].Amount, "100.5 CC: 1.005 USD at mid, 1 USD paid")
			require.Equal(t, "usd", entries[2].Unit)
			creditVerify(t, sys, 8)
		})

		t.Run("repair needs the administrator key; a sound chain is left alone", func(t *testing.T) {
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/audit/repair"), map[string]any{}, anonymous))
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/audit/repair"), map[string]any{}, "X-API-Key: wrong"))
			r := request(t, http.MethodPost, sys.URL("/api/audit/repair"), map[string]any{}, creditAdmin)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, false, r.JSON["repaired"])
			require.Nil(t, r.JSON["repair_entry"])
			require.Nil(t, r.JSON["first_divergent_seq"])
			require.Equal(t, 8, creditAuditTotal(t, sys))
			creditVerify(t, sys, 8)
		})

		t.Run("investment history: the movements, newest first", func(t *testing.T) {
			events := creditHistory(t, sys, ada.ID)
			require.Equal(t, []string{"withdraw", "withdraw", "withdraw", "deposit"}, creditEventKinds(events))
			require.Equal(t, 995.0, events[3]["amount_cc"])
			require.Equal(t, 201.0, events[2]["amount_cc"])
			require.Nil(t, events[3]["idea_id"])
			require.Empty(t, creditHistory(t, sys, bob.ID))
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/contributors/no-such-contributor/investment-history"), nil))
		})
	}, creditFlags...)
}

// TestLedgerCreditStaking: stakes (owner-only, both routes, dry runs that
// write nothing), unstake cooldown tiers, positions, history, pledges and
// the invest preview.
func TestLedgerCreditStaking(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		bob := creditRegister(t, sys, "bob")
		idea1 := creditIdea(t, sys, "solar kettle")
		idea2 := creditIdea(t, sys, "wind sock")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 50, "wire-ada"))
		require.Equal(t, creditBal{Available: 4975}, creditBalances(t, sys, ada.ID))
		stake := func(body map[string]any, headers ...string) response {
			return request(t, http.MethodPost, sys.URL("/api/cc/stake"), body, headers...)
		}
		unstake := func(body map[string]any, headers ...string) response {
			return request(t, http.MethodPost, sys.URL("/api/cc/unstake"), body, headers...)
		}

		t.Run("invest preview of an idea nobody backs", func(t *testing.T) {
			r := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea1+"/invest-preview"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, idea1, r.JSON["idea_id"])
			require.Equal(t, "none", r.JSON["stage"])
			require.Equal(t, 0.5, r.JSON["coherence_score"], "the default confidence")
			require.Equal(t, 0.0, r.JSON["total_cc_staked"])
			require.Equal(t, 0.0, r.JSON["staker_count"])
			require.Equal(t, 0.0, r.JSON["stage_unlock_pct"])
			require.Equal(t, map[string]any{"low_multiplier": 0.5, "high_multiplier": 3.0}, r.JSON["projections"])
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/ideas/no-such-idea/invest-preview"), nil))
		})

		t.Run("stake refusals: 422, 401, 403, 404, 400; nothing moves", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			body := map[string]any{"contributor_id": ada.ID, "idea_id": idea1, "amount_cc": 100}
			requireFieldError(t, stake(map[string]any{"contributor_id": ada.ID, "idea_id": idea1, "amount_cc": 0}, ada.auth()), "amount_cc")
			requireFieldError(t, stake(map[string]any{"contributor_id": ada.ID, "idea_id": idea1, "amount_cc": -1}, ada.auth()), "amount_cc")
			requireFieldError(t, stake(map[string]any{"contributor_id": ada.ID, "amount_cc": 1}, ada.auth()), "idea_id")
			requireStatus(t, http.StatusUnauthorized, stake(body, anonymous))
			requireStatus(t, http.StatusUnauthorized, stake(body, "Authorization: Bearer "+strings.Repeat("f", 64)))
			requireStatus(t, http.StatusForbidden, stake(body, bob.auth()))
			requireStatus(t, http.StatusForbidden, stake(body, creditAdmin)) // the administrator cannot move a contributor's CC
			requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/ideas/"+idea1+"/stake"),
				map[string]any{"contributor_id": ada.ID, "amount_cc": 100}, bob.auth()))
			requireCreditDetail(t, http.StatusNotFound, stake(map[string]any{"contributor_id": ada.ID, "idea_id": "no-such-idea", "amount_cc": 100}, ada.auth()), "no-such-idea")
			requireCreditDetail(t, http.StatusBadRequest, stake(map[string]any{"contributor_id": bob.ID, "idea_id": idea1, "amount_cc": 1}, bob.auth()), "insufficient")
			requireCreditDetail(t, http.StatusBadRequest, stake(map[string]any{"contributor_id": ada.ID, "idea_id": idea1, "amount_cc": 4975.000001}, ada.auth()), "insufficient")
			require.Equal(t, creditBal{Available: 4975}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before, creditAuditTotal(t, sys))
		})

		t.Run("dry run: no token, the projection, nothing written", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			for name, r := range map[string]response{
				"/api/cc/stake": stake(map[string]any{"contributor_id": ada.ID, "idea_id": idea1, "amount_cc": 500, "dry_run": true}, anonymous),
				"/api/ideas/{id}/stake": request(t, http.MethodPost, sys.URL("/api/ideas/"+idea1+"/stake"),
					map[string]any{"contributor_id": ada.ID, "amount_cc": 500, "dry_run": true}, anonymous),
			} {
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, true, r.JSON["dry_run"], name)
				require.Equal(t, idea1, r.JSON["idea_id"], name)
				require.Equal(t, 500.0, r.JSON["amount_cc"], name)
				require.Equal(t, 500.0, r.JSON["position_cc"], name)
				require.Equal(t, 4475.0, r.JSON["available_cc_after"], name)
				require.Equal(t, "none", r.JSON["stage"], name)
				require.Equal(t, map[string]any{"low_multiplier": 0.5, "high_multiplier": 3.0, "stage_unlock_pct": 0.0}, r.JSON["projection"], name)
			}
			require.Equal(t, creditBal{Available: 4975}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before, creditAuditTotal(t, sys))
			require.Empty(t, request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.ID+"/investments"), nil).JSON["positions"])
		})

		t.Run("stake on both routes: 201 with the position and what is left", func(t *testing.T) {
			r := stake(map[string]any{"contributor_id": ada.ID, "idea_id": idea1, "amount_cc": 3000}, ada.auth())
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, false, r.JSON["dry_run"])
			require.Equal(t, ada.ID, r.JSON["contributor_id"])
			require.Equal(t, idea1, r.JSON["idea_id"])
			require.Equal(t, 3000.0, r.JSON["amount_cc"])
			require.Equal(t, 3000.0, r.JSON["position_cc"])
			require.Equal(t, 1975.0, r.JSON["available_cc_after"])

			r = request(t, http.MethodPost, sys.URL("/api/ideas/"+idea1+"/stake"), map[string]any{"contributor_id": ada.ID, "amount_cc": 100}, ada.auth())
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, idea1, r.JSON["idea_id"])
			require.Equal(t, 3100.0, r.JSON["position_cc"], "a second stake adds to the position")
			require.Equal(t, 1875.0, r.JSON["available_cc_after"])

			r = request(t, http.MethodPost, sys.URL("/api/ideas/"+idea2+"/stake"), map[string]any{"contributor_id": ada.ID, "amount_cc": 200}, ada.auth())
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, idea2, r.JSON["idea_id"])
			require.Equal(t, 200.0, r.JSON["position_cc"])
			require.Equal(t, 1675.0, r.JSON["available_cc_after"])
			require.Equal(t, creditBal{Available: 1675, Staked: 3300}, creditBalances(t, sys, ada.ID))

			dry := stake(map[string]any{"contributor_id": ada.ID, "idea_id": idea1, "amount_cc": 25, "dry_run": true}, anonymous)
			requireStatus(t, http.StatusOK, dry)
			require.Equal(t, 3125.0, dry.JSON["position_cc"], "the projection counts the position held")
			require.Equal(t, 1650.0, dry.JSON["available_cc_after"])

			p := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea1+"/invest-preview"), nil)
			requireStatus(t, http.StatusOK, p)
			require.Equal(t, 3100.0, p.JSON["total_cc_staked"])
			require.Equal(t, 1.0, p.JSON["staker_count"])
		})

		t.Run("Idempotency-Key on a stake: one movement; another body is 422", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			body := map[string]any{"contributor_id": ada.ID, "idea_id": idea2, "amount_cc": 10}
			one := stake(body, ada.auth(), "Idempotency-Key: stake-1")
			requireStatus(t, http.StatusCreated, one)
			two := stake(body, ada.auth(), "Idempotency-Key: stake-1")
			requireStatus(t, http.StatusCreated, two)
			require.Equal(t, string(one.Raw), string(two.Raw), "the identical answer")
			require.Equal(t, 210.0, two.JSON["position_cc"])
			require.Equal(t, creditBal{Available: 1665, Staked: 3310}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before+1, creditAuditTotal(t, sys))
			requireFieldError(t, stake(map[string]any{"contributor_id": ada.ID, "idea_id": idea2, "amount_cc": 11}, ada.auth(), "Idempotency-Key: stake-1"),
				"Idempotency-Key")
			require.Equal(t, creditBal{Available: 1665, Staked: 3310}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before+1, creditAuditTotal(t, sys))
		})

		t.Run("investments: positions largest first and the summary", func(t *testing.T) {
			r := request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.ID+"/investments"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, ada.ID, r.JSON["contributor_id"])
			positions := r.JSON["positions"].([]any)
			require.Len(t, positions, 2)
			require.Equal(t, idea1, positions[0].(map[string]any)["idea_id"])
			require.Equal(t, 3100.0, positions[0].(map[string]any)["amount_cc"])
			require.Equal(t, idea2, positions[1].(map[string]any)["idea_id"])
			require.Equal(t, 210.0, positions[1].(map[string]any)["amount_cc"])
			require.Equal(t, map[string]any{"position_count": 2.0, "total_staked_cc": 3310.0, "available_cc": 1665.0, "cooling_cc": 0.0}, r.JSON["summary"])
			require.Equal(t, wantPage(500, 0, 2, false), r.JSON["pagination"], "the default page holds every position")

			// A page of one: the summary still totals both positions.
			for offset, idea := range []string{idea1, idea2} {
				p := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/contributors/%s/investments?limit=1&offset=%d", ada.ID, offset)), nil)
				requireStatus(t, http.StatusOK, p)
				require.Equal(t, []any{positions[offset]}, p.JSON["positions"], idea)
				require.Equal(t, wantPage(1, offset, 2, offset == 0), p.JSON["pagination"])
				require.Equal(t, r.JSON["summary"], p.JSON["summary"], "the summary is of every position, whatever the page")
			}
			past := request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.ID+"/investments?offset=2"), nil)
			requireStatus(t, http.StatusOK, past)
			require.Equal(t, []any{}, past.JSON["positions"], "past the end: empty, not null")
			require.Equal(t, 2.0, past.JSON["summary"].(map[string]any)["position_count"])
			for _, q := range []string{"limit=0", "limit=1001", "limit=x"} {
				requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.ID+"/investments?"+q), nil), "limit")
			}
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.ID+"/investments?offset=-1"), nil), "offset")
		})

		t.Run("unstake refusals: 422, 401, 403, 400", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			body := map[string]any{"contributor_id": ada.ID, "idea_id": idea2, "amount_cc": 10}
			requireFieldError(t, unstake(map[string]any{"contributor_id": ada.ID, "idea_id": idea2, "amount_cc": 0}, ada.auth()), "amount_cc")
			requireStatus(t, http.StatusUnauthorized, unstake(body, anonymous))
			requireStatus(t, http.StatusForbidden, unstake(body, bob.auth()))
			requireCreditDetail(t, http.StatusBadRequest, unstake(map[string]any{"contributor_id": ada.ID, "idea_id": idea2, "amount_cc": 210.000001}, ada.auth()), "insufficient")
			requireCreditDetail(t, http.StatusBadRequest, unstake(map[string]any{"contributor_id": bob.ID, "idea_id": idea2, "amount_cc": 1}, bob.auth()), "insufficient")
			require.Equal(t, creditBal{Available: 1665, Staked: 3310}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before, creditAuditTotal(t, sys))
		})

		// The tier counts what the contributor unstaked from the idea over
		// the last 24 hours, this unstake included (TestLedgerCooldownWindow
		// tests that window). Each amount here is the first unstake from its
		// idea, so each meets its tier's boundary on its own: 50 CC comes from
		// idea2, 1500 CC from idea1, and the three others from ideas staked
		// for them.
		t.Run("unstake cooldown tiers", func(t *testing.T) {
			ideaOf := map[float64]string{50: idea2, 1500: idea1}
			for _, amount := range []float64{99.999999, 100, 1000} {
				ideaOf[amount] = creditIdea(t, sys, fmt.Sprintf("tier of %v CC", amount))
				requireStatus(t, http.StatusCreated, stake(map[string]any{"contributor_id": ada.ID, "idea_id": ideaOf[amount], "amount_cc": amount}, ada.auth()))
			}
			// 1665 - 1199.999999 available; 3310 + 1199.999999 staked.
			require.Equal(t, creditBal{Available: 465.000001, Staked: 4509.999999}, creditBalances(t, sys, ada.ID))
			for _, tc := range []struct {
				amount float64
				status string
				hours  float64
			}{
				{50, "released", 0},
				{99.999999, "released", 0},
				{100, "cooling", 24},
				{1000, "cooling", 24},
				{1500, "cooling", 72},
			} {
				now := time.Now()
				r := unstake(map[string]any{"contributor_id": ada.ID, "idea_id": ideaOf[tc.amount], "amount_cc": tc.amount}, ada.auth())
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, tc.status, r.JSON["status"], "%v CC", tc.amount)
				require.Equal(t, tc.hours, r.JSON["cooldown_hours"], "%v CC", tc.amount)
				require.Equal(t, tc.amount, r.JSON["amount_cc"])
				require.Equal(t, ideaOf[tc.amount], r.JSON["idea_id"])
				at, err := time.Parse(time.RFC3339Nano, r.JSON["available_at"].(string))
				require.NoError(t, err)
				require.WithinDuration(t, now.Add(time.Duration(tc.hours)*time.Hour), at, time.Minute, "%v CC", tc.amount)
			}
			// 465.000001 + 50 + 99.999999 available; 2600 cooling; 4509.999999 -
			// 2749.999999 staked (1600 on idea1, 160 on idea2, none on the others).
			require.Equal(t, creditBal{Available: 615, Staked: 1760, Cooling: 2600}, creditBalances(t, sys, ada.ID))
			requireCreditDetail(t, http.StatusBadRequest, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
				map[string]any{"contributor_id": ada.ID, "amount_cc": 615.000001}, ada.auth()), "insufficient")

			r := request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.ID+"/investments"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, map[string]any{"position_count": 2.0, "total_staked_cc": 1760.0, "available_cc": 615.0, "cooling_cc": 2600.0}, r.JSON["summary"])
			positions := r.JSON["positions"].([]any)
			require.Len(t, positions, 2, "an idea unstaked in full is no position")
			require.Equal(t, idea1, positions[0].(map[string]any)["idea_id"])
			require.Equal(t, 1600.0, positions[0].(map[string]any)["amount_cc"])
			require.Equal(t, idea2, positions[1].(map[string]any)["idea_id"])
			require.Equal(t, 160.0, positions[1].(map[string]any)["amount_cc"])
		})

		t.Run("investment history: every movement newest first, with kinds", func(t *testing.T) {
			events := creditHistory(t, sys, ada.ID)
			require.Equal(t, []string{"unstake", "unstake", "unstake", "unstake", "unstake",
				"stake", "stake", "stake", "stake", "stake", "stake", "stake", "deposit"},
				creditEventKinds(events))
			require.Equal(t, 1500.0, events[0]["amount_cc"])
			require.Equal(t, idea1, events[0]["idea_id"])
			require.Equal(t, 50.0, events[4]["amount_cc"])
			require.Equal(t, idea2, events[4]["idea_id"])
			require.Equal(t, 1000.0, events[5]["amount_cc"], "the tiers' stakes")
			require.Equal(t, 10.0, events[8]["amount_cc"])
			require.Equal(t, idea2, events[8]["idea_id"])
			require.Equal(t, 3000.0, events[11]["amount_cc"])
			require.Equal(t, 4975.0, events[12]["amount_cc"])
			lines := events[11]["lines"].([]any)
			require.Len(t, lines, 2, "a balanced transfer: %v", lines)
			var sum float64
			for _, l := range lines {
				sum += l.(map[string]any)["amount_cc"].(float64)
			}
			require.Zero(t, sum, "the lines balance")
		})

		t.Run("pledges: owner-only, cc_equivalent = hours × 500, no CC moves", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			bal := creditBalances(t, sys, ada.ID)
			path := sys.URL("/api/contributors/" + ada.ID + "/pledges")
			body := map[string]any{"idea_id": idea1, "hours_pledged": 2.5}
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, path, body, anonymous))
			requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, path, body, bob.auth()))
			requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, path, body, creditAdmin)) // nor the administrator
			requireFieldError(t, request(t, http.MethodPost, path, map[string]any{"idea_id": idea1, "hours_pledged": 0}, ada.auth()), "hours_pledged")
			requireStatus(t, http.StatusNotFound, request(t, http.MethodPost, path, map[string]any{"idea_id": "no-such-idea", "hours_pledged": 1}, ada.auth()))

			r := request(t, http.MethodPost, path, body, ada.auth())
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, 1250.0, r.JSON["cc_equivalent"])
			require.Equal(t, 2.5, r.JSON["hours_pledged"])
			require.Equal(t, ada.ID, r.JSON["contributor_id"])
			require.Equal(t, idea1, r.JSON["idea_id"])
			require.Regexp(t, `^[0-9a-f-]{36}$`, r.JSON["id"])
			require.Equal(t, bal, creditBalances(t, sys, ada.ID), "a pledge moves no CC")
			require.Equal(t, before, creditAuditTotal(t, sys))
		})

		t.Run("audit chain of the whole session verifies", func(t *testing.T) {
			entries, total := creditAudit(t, sys)
			require.Equal(t, 14, total, "deposit + spread fee, 7 stakes, 5 unstakes")
			require.Equal(t, []string{"unstake", "unstake", "unstake", "unstake", "unstake",
				"stake", "stake", "stake", "stake", "stake", "stake", "stake", "spread_fee", "deposit"},
				creditKinds(entries))
			creditVerify(t, sys, 14)
		})

		// Last: a dry run that is taken for a real stake moves CC, which
		// must not disturb the checks above.
		t.Run("dry_run as a query parameter: the projection, nothing written", func(t *testing.T) {
			cy := creditRegister(t, sys, "cyd")
			requireStatus(t, http.StatusCreated, creditDeposit(t, sys, cy.ID, 10, "wire-cy"))
			for _, tc := range []struct {
				name    string
				path    string
				body    map[string]any
				headers []string
			}{
				{"/api/cc/stake, no token", "/api/cc/stake?dry_run=true", map[string]any{"contributor_id": cy.ID, "idea_id": idea1, "amount_cc": 500}, []string{anonymous}},
				{"/api/ideas/{id}/stake, no token", "/api/ideas/" + idea1 + "/stake?dry_run=true", map[string]any{"contributor_id": cy.ID, "amount_cc": 500}, []string{anonymous}},
				{"/api/cc/stake, with the owner's token", "/api/cc/stake?dry_run=true", map[string]any{"contributor_id": cy.ID, "idea_id": idea1, "amount_cc": 500},
					[]string{cy.auth()}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					before := creditAuditTotal(t, sys)
					r := request(t, http.MethodPost, sys.URL(tc.path), tc.body, tc.headers...)
					require.Equal(t, creditBal{Available: 995}, creditBalances(t, sys, cy.ID), "nothing staked")
					require.Equal(t, before, creditAuditTotal(t, sys), "nothing recorded")
					requireStatus(t, http.StatusOK, r)
					require.Equal(t, true, r.JSON["dry_run"])
					require.Equal(t, 500.0, r.JSON["position_cc"])
					require.Equal(t, 495.0, r.JSON["available_cc_after"])
				})
			}
		})
	}, creditFlags...)
}

// TestLedgerCreditIncidents: the oracle circuit breaker and the emergency
// freeze: signed by a configured signer, refusing every movement with
// "frozen" until an administrator unfreezes; both listed as incidents.
func TestLedgerCreditIncidents(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		idea := creditIdea(t, sys, "tidal clock")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-1"))
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 200}, ada.auth()))
		require.Equal(t, creditBal{Available: 795, Staked: 200}, creditBalances(t, sys, ada.ID))
		reading := func(price float64, headers ...string) response {
			return request(t, http.MethodPost, sys.URL("/api/cc/oracle/readings"), map[string]any{"cc_per_usd": price}, headers...)
		}

		t.Run("oracle: a reading 30 % off the 1-hour average trips the breaker", func(t *testing.T) {
			requireStatus(t, http.StatusUnauthorized, reading(100, anonymous))
			requireStatus(t, http.StatusUnauthorized, reading(100, "X-API-Key: wrong"))
			requireFieldError(t, reading(0, creditAdmin), "cc_per_usd")
			requireFieldError(t, reading(-100, creditAdmin), "cc_per_usd")
			for range 2 {
				r := reading(100, creditAdmin)
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, "accepted", r.JSON["verdict"])
				require.Equal(t, false, r.JSON["breaker_tripped"])
				require.Equal(t, 100.0, r.JSON["cc_per_usd"])
			}
			r := reading(130, creditAdmin)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, "tripped", r.JSON["verdict"])
			require.Equal(t, true, r.JSON["breaker_tripped"])
			require.Equal(t, 130.0, r.JSON["reading_cc_per_usd"])
			require.Equal(t, 100.0, r.JSON["cc_per_usd"], "the rate stays at the last good value")

			rate := request(t, http.MethodGet, sys.URL("/api/cc/exchange-rate"), nil)
			requireStatus(t, http.StatusOK, rate)
			require.Equal(t, 100.0, rate.JSON["cc_per_usd"])
			require.Equal(t, 99.5, rate.JSON["buy_rate"])
			require.Equal(t, 100.5, rate.JSON["sell_rate"])
			require.Equal(t, true, rate.JSON["breaker_tripped"])

			st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
			requireStatus(t, http.StatusOK, st)
			require.Equal(t, true, st.JSON["oracle_breaker_tripped"])
			require.Equal(t, false, st.JSON["frozen"])
			require.Equal(t, "normal", st.JSON["mode"])
			require.Equal(t, "elevated", st.JSON["severity"])

			incidents, page := listPage(t, request(t, http.MethodGet, sys.URL("/api/incidents"), nil), "incidents")
			require.Len(t, incidents, 1)
			require.Equal(t, wantPage(50, 0, 1, false), page)
			require.Equal(t, "oracle_tripped", incidents[0]["kind"])
			require.Contains(t, incidents[0]["detail"], "130")

			entries, _ := creditAudit(t, sys)
			require.Equal(t, "oracle_tripped", entries[0].Kind)
			require.Equal(t, 130.0, entries[0].Amount, "the reading, in CC per USD")
			require.Equal(t, "cc_per_usd", entries[0].Unit)
		})

		const reason = "treasury keys may be compromised"
		freeze := func(body map[string]any) response {
			return request(t, http.MethodPost, sys.URL("/api/incidents/freeze"), body, anonymous)
		}

		// without returns signedFreeze's body without some of its fields.
		without := func(body map[string]any, fields ...string) map[string]any {
			for _, f := range fields {
				delete(body, f)
			}
			return body
		}
		// with returns signedFreeze's body with field set to value.
		with := func(body map[string]any, field string, value any) map[string]any {
			body[field] = value
			return body
		}

		t.Run("freeze: only a configured signer with a valid signature", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			for name, body := range map[string]map[string]any{
				"bad signature":          with(signedFreeze(freezeOpsSecret, "ops", reason), "signature", strings.Repeat("ab", 32)),
				"another signer's key":   signedFreeze(freezeSecSecret, "ops", reason),
				"signed another reason":  with(signedFreeze(freezeOpsSecret, "ops", "something else"), "reason", reason),
				"unknown signer":         signedFreeze(freezeOpsSecret, "mallory", reason),
				"not hex":                with(signedFreeze(freezeOpsSecret, "ops", reason), "signature", "zz"),
				"unknown, empty secret":  signedFreeze("", "mallory", reason),
				"signer id, wrong case":  signedFreeze(freezeOpsSecret, "OPS", reason),
				"signature of the other": signedFreeze(freezeOpsSecret, "sec", reason),
			} {
				r := freeze(body)
				requireStatus(t, http.StatusForbidden, r)
				require.Equal(t, "unknown signer or bad signature", r.JSON["detail"], name)
				require.NotContains(t, string(r.Raw), freezeOpsSecret, name)
			}
			requireFieldError(t, freeze(without(signedFreeze(freezeOpsSecret, "ops", ""), "reason")), "reason")
			requireFieldError(t, freeze(without(signedFreeze(freezeOpsSecret, "ops", reason), "signature")), "signature")
			requireFieldError(t, freeze(without(signedFreeze(freezeOpsSecret, "ops", reason), "signer_id")), "signer_id")
			requireFieldError(t, freeze(without(signedFreeze(freezeOpsSecret, "ops", reason), "issued_at")), "issued_at")
			requireFieldError(t, freeze(without(signedFreeze(freezeOpsSecret, "ops", reason), "nonce")), "nonce")
			require.Equal(t, before, creditAuditTotal(t, sys))
			s := creditSupply(t, sys)
			require.Equal(t, "normal", s["mode"])
		})

		t.Run("a valid freeze: 200 frozen; its replay: 403; another: 409", func(t *testing.T) {
			signed := signedFreeze(freezeOpsSecret, "ops", reason)
			r := freeze(signed)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, true, r.JSON["frozen"])
			require.Equal(t, "ops", r.JSON["signer_id"])
			require.Equal(t, reason, r.JSON["reason"])
			_, err := time.Parse(time.RFC3339Nano, r.JSON["frozen_at"].(string))
			require.NoError(t, err)

			requireCreditDetail(t, http.StatusForbidden, freeze(signed), "nonce was used before")
			requireStatus(t, http.StatusConflict, freeze(signedFreeze(freezeOpsSecret, "ops", reason)))
			requireStatus(t, http.StatusConflict, freeze(signedFreeze(freezeSecSecret, "sec", "again")))

			st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
			requireStatus(t, http.StatusOK, st)
			require.Equal(t, true, st.JSON["frozen"])
			require.Equal(t, "frozen", st.JSON["mode"])
			require.Equal(t, reason, st.JSON["frozen_reason"])
			require.Equal(t, "critical", st.JSON["severity"])
			require.Equal(t, "frozen", creditSupply(t, sys)["mode"])
		})

		t.Run("while frozen every movement is 400 frozen", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			for name, r := range map[string]response{
				"deposit": creditDeposit(t, sys, ada.ID, 5, "wire-2"),
				"stake": request(t, http.MethodPost, sys.URL("/api/cc/stake"),
					map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 10}, ada.auth()),
				"stake on the idea": request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/stake"),
					map[string]any{"contributor_id": ada.ID, "amount_cc": 10}, ada.auth()),
				"unstake": request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
					map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 10}, ada.auth()),
				"withdraw": request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
					map[string]any{"contributor_id": ada.ID, "amount_cc": 10}, ada.auth()),
			} {
				requireStatus(t, http.StatusBadRequest, r)
				require.Equal(t, "frozen", r.JSON["detail"], name)
			}
			require.Equal(t, creditBal{Available: 795, Staked: 200}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before, creditAuditTotal(t, sys))
			s := creditSupply(t, sys)
			require.Equal(t, 995.0, s["total_cc_outstanding"])
			require.Equal(t, 10.0, s["treasury_value_usd"])
		})

		t.Run("unfreeze needs the administrator key", func(t *testing.T) {
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"), map[string]any{}, anonymous))
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"), map[string]any{}, "X-API-Key: wrong"))
			// A contributor's session is a valid credential without the role.
			requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"), map[string]any{}, ada.auth()))
			require.Equal(t, "frozen", creditSupply(t, sys)["mode"])

			r := request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"), map[string]any{"reason": "keys rotated"}, creditAdmin)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, false, r.JSON["frozen"])
			require.Equal(t, "normal", r.JSON["mode"])
			requireStatus(t, http.StatusConflict, request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"), map[string]any{}, creditAdmin))

			st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
			requireStatus(t, http.StatusOK, st)
			require.Equal(t, false, st.JSON["frozen"])
			require.Equal(t, "normal", st.JSON["mode"])
			require.Nil(t, st.JSON["frozen_reason"])
		})

		// The breaker tripped above stays open (at least 5 minutes after
		// the trip): movements that exchange USD and CC wait for it.
		t.Run("after the unfreeze movements work again, but the open breaker refuses exchange", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			requireCreditDetail(t, http.StatusBadRequest, creditDeposit(t, sys, ada.ID, 5, "wire-2"), "oracle_breaker_tripped")
			requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
				map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 10}, ada.auth()))
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
				map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 10}, ada.auth()))
			requireCreditDetail(t, http.StatusBadRequest, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
				map[string]any{"contributor_id": ada.ID, "amount_cc": 100.5}, ada.auth()), "oracle_breaker_tripped")
			// 795 - 10 staked + 10 released.
			require.Equal(t, creditBal{Available: 795, Staked: 200}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before+2, creditAuditTotal(t, sys), "the stake and the unstake")
			s := creditSupply(t, sys)
			require.Equal(t, 995.0, s["total_cc_outstanding"], "nothing minted or burned")
			require.Equal(t, 10.0, s["treasury_value_usd"])
		})

		t.Run("incidents: freeze and unfreeze listed newest first", func(t *testing.T) {
			raw, page := listPage(t, request(t, http.MethodGet, sys.URL("/api/incidents"), nil), "incidents")
			var kinds []string
			for _, it := range raw {
				kinds = append(kinds, it["kind"].(string))
			}
			require.Equal(t, []string{"unfreeze", "freeze", "oracle_tripped"}, kinds)
			require.Equal(t, wantPage(50, 0, 3, false), page)
			freezeIncident := raw[1]
			require.Equal(t, "signer:ops", freezeIncident["actor"])
			require.Equal(t, "critical", freezeIncident["severity"])
			require.Contains(t, freezeIncident["detail"], reason)
			require.Equal(t, "admin", raw[0]["actor"])
			require.Contains(t, raw[0]["detail"], "keys rotated")
			var prev time.Time
			for i, it := range raw {
				at, err := time.Parse(time.RFC3339Nano, it["created_at"].(string))
				require.NoError(t, err)
				if i > 0 {
					require.False(t, at.After(prev), "newest first")
				}
				prev = at
			}

			entries, total := creditAudit(t, sys)
			kindsAudit := creditKinds(entries)
			require.Contains(t, kindsAudit, "freeze")
			require.Contains(t, kindsAudit, "unfreeze")
			creditVerify(t, sys, total)
		})
	}, freezeFlags...)
}
