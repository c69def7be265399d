package e2e_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// The signed emergency freeze, black-box through the gateway: the
// signature covers signer_id|issued_at|nonce|reason, a time more than 5
// minutes off and a nonce seen before are refused (403), the old
// reason-only body is a 422, signer secrets are at least 32 bytes, and
// FOUNDRY_SIGNERS may have spaces around ":".

// The signers of these tests; their secrets are 32 bytes and more.
const (
	freezeOpsSecret = "ops-0123456789abcdef0123456789ab"
	freezeSecSecret = "sec-0123456789abcdef0123456789abcdef"
)

// freezeFlags start a Foundry with both signers and a deterministic economy.
var freezeFlags = append([]string{"-signers=ops:" + freezeOpsSecret + ",sec:" + freezeSecSecret}, creditFlags...)

// freezeHMAC is hex HMAC-SHA256(secret, message).
func freezeHMAC(secret, message string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(message))
	return hex.EncodeToString(m.Sum(nil))
}

// freezeNonce is a new random nonce (16 bytes, 32 hex digits).
func freezeNonce(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// freezeBody is a freeze signer signed with secret at issued.
func freezeBody(secret, signer string, issued time.Time, nonce, reason string) map[string]any {
	at := issued.UTC().Format(time.RFC3339)
	return map[string]any{"signer_id": signer, "issued_at": at, "nonce": nonce, "reason": reason,
		"signature": freezeHMAC(secret, signer+"|"+at+"|"+nonce+"|"+reason)}
}

// freezePost posts a freeze body to url, anonymously (the route is public:
// the signature is the credential).
func freezePost(t *testing.T, url string, body map[string]any) response {
	t.Helper()
	return request(t, http.MethodPost, url+"/api/incidents/freeze", body, anonymous)
}

func freezeUnfreeze(t *testing.T, url string) {
	t.Helper()
	requireStatus(t, http.StatusOK, request(t, http.MethodPost, url+"/api/incidents/unfreeze", map[string]any{"reason": "drill over"}, creditAdmin))
}

// freezeMode is the economy's mode.
func freezeMode(t *testing.T, url string) string {
	t.Helper()
	r := request(t, http.MethodGet, url+"/api/cc/supply", nil)
	requireStatus(t, http.StatusOK, r)
	return r.JSON["mode"].(string)
}

// TestLedgerFreezeSigned: only a fresh, new, properly signed freeze
// freezes; nothing refused writes anything.
func TestLedgerFreezeSigned(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		base := sys.BaseURL
		const reason = "treasury keys may be compromised"
		good := freezeBody(freezeOpsSecret, "ops", time.Now(), freezeNonce(t), reason)
		with := func(change func(map[string]any)) map[string]any {
			out := map[string]any{}
			for k, v := range good {
				out[k] = v
			}
			change(out)
			return out
		}

		t.Run("the old reason-only body: 422 naming issued_at and nonce", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			old := map[string]any{"signer_id": "ops", "reason": reason, "signature": freezeHMAC(freezeOpsSecret, reason)}
			r := freezePost(t, base, old)
			requireFieldError(t, r, "issued_at")
			requireFieldError(t, r, "nonce")
			for field, body := range map[string]map[string]any{
				"issued_at": with(func(b map[string]any) {
					b["issued_at"] = time.Now().In(time.FixedZone("CET", 3600)).Format(time.RFC3339)
				}),
				"nonce":     with(func(b map[string]any) { b["nonce"] = "not-a-hex-nonce!" }),
				"reason":    with(func(b map[string]any) { delete(b, "reason") }),
				"signature": with(func(b map[string]any) { delete(b, "signature") }),
				"signer_id": with(func(b map[string]any) { delete(b, "signer_id") }),
			} {
				requireFieldError(t, freezePost(t, base, body), field)
			}
			requireFieldError(t, freezePost(t, base, with(func(b map[string]any) { b["nonce"] = strings.Repeat("a", 15) })), "nonce")
			requireFieldError(t, freezePost(t, base, with(func(b map[string]any) { b["nonce"] = strings.Repeat("a", 65) })), "nonce")
			require.Equal(t, before, creditAuditTotal(t, sys))
		})

		t.Run("not signed by the signer over every field: 403", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			now := time.Now()
			for name, body := range map[string]map[string]any{
				"another signer's secret": freezeBody(freezeSecSecret, "ops", now, freezeNonce(t), reason),
				"unknown signer":          freezeBody(freezeOpsSecret, "mallory", now, freezeNonce(t), reason),
				"signer id, wrong case":   freezeBody(freezeOpsSecret, "OPS", now, freezeNonce(t), reason),
				"the reason's HMAC":       with(func(b map[string]any) { b["signature"] = freezeHMAC(freezeOpsSecret, reason) }),
				"reason changed":          with(func(b map[string]any) { b["reason"] = "something else" }),
				"nonce changed":           with(func(b map[string]any) { b["nonce"] = freezeNonce(t) }),
				"time changed": with(func(b map[string]any) {
					b["issued_at"] = now.Add(time.Second).UTC().Format(time.RFC3339)
				}),
				"not hex": with(func(b map[string]any) { b["signature"] = "zz" }),
			} {
				r := freezePost(t, base, body)
				requireStatus(t, http.StatusForbidden, r)
				require.Equal(t, "unknown signer or bad signature", r.JSON["detail"], name)
				require.NotContains(t, string(r.Raw), freezeOpsSecret, name)
			}
			require.Equal(t, before, creditAuditTotal(t, sys))
		})

		t.Run("signed more than 5 minutes off the ledger's clock: 403", func(t *testing.T) {
			for _, d := range []time.Duration{-6 * time.Minute, 6 * time.Minute, -24 * time.Hour} {
				r := freezePost(t, base, freezeBody(freezeOpsSecret, "ops", time.Now().Add(d), freezeNonce(t), reason))
				requireStatus(t, http.StatusForbidden, r)
				require.Contains(t, r.JSON["detail"], "issued_at is more than 5m0s from the ledger's clock", d)
			}
			require.Equal(t, "normal", freezeMode(t, base))
		})

		t.Run("a valid freeze freezes once; its replay is refused, even after an unfreeze and a restart", func(t *testing.T) {
			r := freezePost(t, base, good)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, true, r.JSON["frozen"])
			require.Equal(t, "ops", r.JSON["signer_id"])
			require.Equal(t, reason, r.JSON["reason"])

			entries, _ := creditAudit(t, sys)
			require.Equal(t, "freeze", entries[0].Kind)
			require.Equal(t, good["nonce"], entries[0].Attrs["nonce"])
			require.Equal(t, good["issued_at"], entries[0].Attrs["issued_at"])

			// The replay: exactly the request a bystander saw (the reason
			// itself is published by GET /api/incidents).
			replay := freezePost(t, base, good)
			requireStatus(t, http.StatusForbidden, replay)
			require.Equal(t, "nonce was used before: every freeze needs a new one", replay.JSON["detail"])

			// A new freeze while frozen is a conflict, and spends its nonce.
			second := freezeBody(freezeSecSecret, "sec", time.Now(), freezeNonce(t), "again")
			requireStatus(t, http.StatusConflict, freezePost(t, base, second))

			freezeUnfreeze(t, base)
			for _, body := range []map[string]any{good, second} {
				requireStatus(t, http.StatusForbidden, freezePost(t, base, body))
			}
			require.Equal(t, "normal", freezeMode(t, base))

			sys.Restart()
			base = sys.BaseURL
			for _, body := range []map[string]any{good, second} {
				r := freezePost(t, base, body)
				requireStatus(t, http.StatusForbidden, r)
				require.Contains(t, r.JSON["detail"], "nonce was used before")
			}
			require.Equal(t, "normal", freezeMode(t, base))

			// A new nonce freezes again.
			requireStatus(t, http.StatusOK, freezePost(t, base, freezeBody(freezeOpsSecret, "ops", time.Now(), freezeNonce(t), "drill")))
			freezeUnfreeze(t, base)
		})
	}, freezeFlags...)
}

// TestLedgerFreezeSigners: FOUNDRY_SIGNERS keeps no spaces around ":" and
// ","; a secret shorter than 32 bytes stops the ledger at startup.
func TestLedgerFreezeSigners(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		storage := allinonetest.NewStorage(t, engine)

		short := allinonetest.NewProc(t, "foundry", "all", storage, "-monitor-interval=0").WithEnv("FOUNDRY_SIGNERS=s1:a")
		short.Launch()
		exited, err := short.Wait(60 * time.Second)
		require.True(t, exited, "a 1-byte secret must stop the startup")
		require.Error(t, err)
		require.Contains(t, short.Output(), `FOUNDRY_SIGNERS: the secret of signer "s1" is 1 bytes; want at least 32`)

		p := startFoundry(t, storage, []string{"FOUNDRY_SIGNERS= ops : " + freezeOpsSecret + " , sec :" + freezeSecSecret + " "},
			"-rate-poll-interval=0")
		for _, signer := range []struct{ id, secret string }{{"ops", freezeOpsSecret}, {"sec", freezeSecSecret}} {
			r := freezePost(t, p.URL(""), freezeBody(signer.secret, signer.id, time.Now(), freezeNonce(t), "spaces are not part of it"))
			requireStatus(t, http.StatusOK, r)
			freezeUnfreeze(t, p.URL(""))
		}
		requireStatus(t, http.StatusForbidden,
			freezePost(t, p.URL(""), freezeBody(" "+freezeOpsSecret, "ops", time.Now(), freezeNonce(t), "the secret with its space")))
	})
}
