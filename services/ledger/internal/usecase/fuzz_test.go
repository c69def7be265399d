package usecase_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// answer is a RoundTripper that answers every request with one response,
// so the rate oracle's decoding is fuzzed without a network.
type answer struct {
	status int
	body   []byte
}

func (a answer) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: a.status, Body: io.NopCloser(bytes.NewReader(a.body)), Header: http.Header{}}, nil
}

// FuzzHTTPRate checks the rate oracle's answer is believed only when it is
// a 200 whose JSON object carries a cc_per_usd number that is a positive
// amount of at most six decimals, read exactly; anything else is an error
// that never shows the oracle's URL (it may carry a key).
func FuzzHTTPRate(f *testing.F) {
	f.Add(200, []byte(`{"cc_per_usd": 98.25}`))
	f.Add(200, []byte(`{"cc_per_usd": 0}`))
	f.Add(200, []byte(`{"cc_per_usd": "98"}`))
	f.Add(200, []byte(`{"cc_per_usd": 1e400}`))
	f.Add(200, []byte(`{"cc_per_usd": 9000000000000}`))
	f.Add(200, []byte(`{"cc_per_usd": 1.0000001}`))
	f.Add(200, []byte(`{"cc_per_usd": null}`))
	f.Add(200, []byte(`[{"cc_per_usd": 1}]`))
	f.Add(200, []byte(`{"cc_per_usd": 1} trailing`))
	f.Add(503, []byte(`{"cc_per_usd": 1}`))
	f.Add(200, []byte("\xff"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		const url = "https://oracle.example/rate?key=k3y-s3cret"
		client := &http.Client{Transport: answer{status: status, body: body}}
		rate, err := usecase.HTTPRate{URL: url, Client: client}.Rate(context.Background())
		if err != nil {
			require.NotContains(t, err.Error(), "k3y-s3cret")
			require.Zero(t, rate)
			return
		}
		require.Equal(t, http.StatusOK, status)
		require.Positive(t, int64(rate))
		// The first JSON value of the body holds the number read.
		var doc struct {
			CCPerUSD *float64 `json:"cc_per_usd"`
		}
		require.NoError(t, json.NewDecoder(bytes.NewReader(body)).Decode(&doc))
		require.NotNil(t, doc.CCPerUSD)
		want, err := money.FromFloat(*doc.CCPerUSD)
		require.NoError(t, err)
		require.Equal(t, want, rate)
	})
}

// FuzzFreezeSignature checks the emergency freeze refuses, as a 403, every
// well-formed request whose signature is not hex HMAC-SHA256 of
// signer_id|issued_at|nonce|reason under the named signer's own secret:
// another signer's secret, an unknown signer, a signature of another
// reason or of the reason alone (the old format), malformed hex; and a
// malformed one as a 422. (An accepted signature goes on to the store,
// which this pure target has not: it is left to TestFreezeAndUnfreeze.)
// The time and nonce are fixed and valid, so the committed corpus of
// (signer, reason, signature) still applies.
func FuzzFreezeSignature(f *testing.F) {
	freeze := func(signer, reason, signature string) usecase.FreezeCmd {
		return usecase.FreezeCmd{SignerID: signer, IssuedAt: "2026-11-23T09:00:00Z", Nonce: "00112233445566778899aabbccddeeff",
			Reason: reason, Signature: signature}
	}
	sign := func(secret, signer, reason string) string {
		return credit.SignFreeze(secret, freeze(signer, reason, ""))
	}
	f.Add("ops", "oracle compromised", sign(opsSecret, "ops", "oracle compromised"))
	f.Add("ops", "x", sign("other", "ops", "x"))
	f.Add("nobody", "x", sign(opsSecret, "nobody", "x"))
	f.Add("ops", "x", "not hex")
	f.Add("ops", "x", strings.ToUpper(sign(opsSecret, "ops", "x")))
	f.Add("ops", "x", sign(opsSecret, "ops", "x")+"00")
	f.Add("", "", sign("", "", ""))
	f.Add("audit", "x", sign(opsSecret, "audit", "x"))
	f.Add("ops", "x", credit.SignFreeze(opsSecret, credit.SignedFreeze{Reason: "x"}))
	signers := map[string]string{"ops": opsSecret, "audit": auditSecret}
	app := usecase.New(nil, nil, usecase.Config{Signers: signers, Clock: clock.NewFake(t0)})
	f.Fuzz(func(t *testing.T, signer, reason, signature string) {
		secret, known := signers[signer]
		if known && strings.EqualFold(signature, sign(secret, signer, reason)) {
			return // a valid signature: the freeze proceeds to the store
		}
		want := fault.Forbidden
		for _, v := range []string{signer, reason, signature} {
			if strings.TrimSpace(v) == "" || len(v) > 500 {
				want = fault.Invalid
			}
		}
		_, err := app.Freeze(context.Background(), freeze(signer, reason, signature))
		require.Equal(t, want, fault.KindOf(err), "signer %q, signature %q: %v", signer, signature, err)
		if want == fault.Invalid {
			return
		}
		for id, s := range signers {
			if s != secret {
				_, err := app.Freeze(context.Background(), freeze(signer, reason, sign(s, signer, reason)))
				require.Equal(t, fault.Forbidden, fault.KindOf(err), "signer %q with %s's secret", signer, id)
			}
		}
		_, err = app.Freeze(context.Background(), freeze(signer, reason, credit.SignFreeze(secret, credit.SignedFreeze{Reason: reason})))
		require.Equal(t, fault.Forbidden, fault.KindOf(err), "the reason's HMAC alone")
	})
}

// FuzzObservePrice checks a rate reading (an administrator's, or the
// oracle's) is refused as a 422 on cc_per_usd when the economy could not
// post a quote around it, so it can never become the rate in force and
// fail every money operation after it. (A quotable reading goes on to the
// store, which this pure target has not.)
func FuzzObservePrice(f *testing.F) {
	for _, p := range []int64{0, -1, 1, 2, 100_000_000, math.MaxInt64, math.MinInt64} {
		f.Add(p)
	}
	app := usecase.New(nil, nil, usecase.Config{})
	f.Fuzz(func(t *testing.T, price int64) {
		if _, err := credit.NewQuote(money.Micros(price), credit.DefaultSpreadBP); err == nil {
			return
		}
		_, err := app.ObservePrice(context.Background(), money.Micros(price), "manual", "admin")
		fe, ok := fault.As(err)
		require.True(t, ok, "price %d: %v", price, err)
		require.Equal(t, fault.Invalid, fe.Kind)
		require.Equal(t, "cc_per_usd", fe.Fields[0].Field)
	})
}
