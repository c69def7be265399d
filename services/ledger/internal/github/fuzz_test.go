package github_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/github"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// seedPayloads are real deliveries added to the committed corpus in
// testdata/fuzz.
var seedPayloads = []string{
	"push-with-new-branch.payload.json",
	"push-with-no-username-committer.payload.json",
	"push-payload.json",
	"ping-payload.json",
}

// FuzzVerify checks the signature verifier never panics, accepts exactly
// the signature of the body under the secret, and refuses everything else.
func FuzzVerify(f *testing.F) {
	for _, name := range seedPayloads[:2] {
		body := fixture(f, name)
		f.Add("secret", body, github.Sign("secret", body))
		f.Add("secret", body, github.Sign("other", body))
	}
	f.Add("", []byte("{}"), "")
	f.Add("s", []byte{}, "sha1=0000000000000000000000000000000000000000")
	f.Fuzz(func(t *testing.T, secret string, body []byte, header string) {
		v := github.NewVerifier(secret, true)
		err := v.Verify(body, header)
		if err != nil {
			require.Equal(t, fault.Unauthenticated, fault.KindOf(err), "every refusal is a 401: %v", err)
		}
		strictErr := github.NewVerifier(secret, false).Verify(body, header)
		if secret == "" {
			require.Equal(t, header == "", err == nil, "without a secret, when allowed, only unsigned deliveries pass")
			require.Equal(t, fault.Unauthenticated, fault.KindOf(strictErr), "without a secret, by default, nothing passes")
			return
		}
		require.Equal(t, err == nil, strictErr == nil, "with a secret, allowing unsigned deliveries changes nothing")
		want := github.Sign(secret, body)
		require.Equal(t, strings.EqualFold(header, want) && strings.HasPrefix(header, "sha256="), err == nil,
			"header %q, want %q: %v", header, want, err)
		require.NoError(t, v.Verify(body, want), "the true signature always passes")
		// Not secret+"\x00": HMAC pads short keys with zeros, so that one is
		// the same key.
		other := secret + "x"
		require.Error(t, v.Verify(body, github.Sign(other, body)), "a signature under another secret never passes")
		require.Error(t, v.Verify(append(body, ' '), want), "a signature of another body never passes")
	})
}

// FuzzValidateDeliveryID checks an X-GitHub-Delivery value is kept only
// when it is at most MaxDeliveryIDLen bytes of printable characters, and
// refused otherwise with a 422 naming the header.
func FuzzValidateDeliveryID(f *testing.F) {
	for _, s := range []string{"", "72d3162e-cc78-11e3-81ab-4c9367dc0958", "a b", "a\nb", "\x00", "\xff", "\u200b", "日本",
		strings.Repeat("a", github.MaxDeliveryIDLen), strings.Repeat("a", github.MaxDeliveryIDLen+1), strings.Repeat("é", 101)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := github.ValidateDeliveryID(id)
		ok := len(id) <= github.MaxDeliveryIDLen
		for _, r := range id {
			ok = ok && unicode.IsPrint(r)
		}
		if ok {
			require.NoError(t, err, "id %q", id)
			return
		}
		fe, isFault := fault.As(err)
		require.True(t, isFault, "id %q: %v", id, err)
		require.Equal(t, fault.Invalid, fe.Kind)
		require.Equal(t, github.HeaderDelivery, fe.Fields[0].Field)
	})
}

// FuzzDecode checks the payload decoder never panics and that whatever it
// accepts is safe to record: a valid repository, a namespaced contributor,
// a cost within the estimate's bounds or the amount limits, metadata whose
// coherence is computable or a clear 422.
func FuzzDecode(f *testing.F) {
	for _, name := range seedPayloads {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"contributor_email":"a@b.c","repository":"a/b","cost_amount":1.5,"metadata":{"has_tests":true}}`))
	f.Add([]byte(`{"repository":{"full_name":"a/b"},"pusher":{"name":"x"},"commits":[{"id":"abcd","added":["a_test.go"]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := github.Decode(body)
		if err != nil {
			if _, ignored := github.IsIgnored(err); ignored {
				return
			}
			require.Equal(t, fault.Invalid, fault.KindOf(err), "a bad body is a 422, never a 500: %v", err)
			return
		}
		require.Regexp(t, `^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`, p.Repository)
		id := p.ContributorID()
		require.True(t, strings.HasPrefix(id, github.LoginPrefix) || strings.HasPrefix(id, github.EmailPrefix), id)
		require.Greater(t, len(id), len(github.EmailPrefix))
		cost := p.EstimatedCost()
		require.GreaterOrEqual(t, int64(cost), int64(0))
		if p.Cost == nil {
			require.GreaterOrEqual(t, cost, attribution.EstimateMin)
			require.LessOrEqual(t, cost, attribution.EstimateMax)
		} else {
			require.LessOrEqual(t, cost, attribution.MaxAmount)
		}
		require.NotNil(t, p.Metadata)
		if _, err := attribution.Score(p.Metadata); err != nil {
			require.Equal(t, fault.Invalid, fault.KindOf(err))
		}
		require.Equal(t, "d", p.RecordedMetadata("d")[github.KeyGitHub].(map[string]any)["delivery_id"])
	})
}
