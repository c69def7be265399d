package ledger

import (
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
)

// FuzzParseSigners checks FOUNDRY_SIGNERS parsing: every accepted list
// prints back ("id:secret,...") to the same signers, each with a non-empty
// id without "|" and a secret of at least 32 bytes, neither with spaces
// around it, and one entry per non-blank pair; a refusal names the
// setting.
func FuzzParseSigners(f *testing.F) {
	long := strings.Repeat("k", 32)
	for _, s := range []string{"", "ops:s3cret", "ops:s3cret, audit:an0ther", "ops:a:b", "ops:", ":x", "ops", "a:1,a:2", " , ,",
		"ops :s", "ops: s", "\xff:\xfe", "日本:語", "ops:" + long, "ops : " + long + " , audit:" + long + ":x", "a|b:" + long,
		"ops:" + long[:31], "a:" + long + ",a:" + long} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		signers, err := parseSigners(v)
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "FOUNDRY_SIGNERS: "), err.Error())
			require.Nil(t, signers)
			return
		}
		pairs := 0
		for _, p := range strings.Split(v, ",") {
			if strings.TrimSpace(p) != "" {
				pairs++
			}
		}
		require.Len(t, signers, pairs)
		var printed []string
		for _, id := range slices.Sorted(maps.Keys(signers)) {
			require.NotEmpty(t, id)
			require.GreaterOrEqual(t, len(signers[id]), 32)
			require.Equal(t, strings.TrimSpace(id), id)
			require.Equal(t, strings.TrimSpace(signers[id]), signers[id])
			require.NotContains(t, id, ":")
			require.NotContains(t, id, "|")
			printed = append(printed, id+":"+signers[id])
		}
		again, err := parseSigners(strings.Join(printed, ","))
		require.NoError(t, err)
		require.Equal(t, signers, again)
	})
}

// FuzzEconomyConfig checks the credit economy's settings: an accepted
// configuration has a rate and a pledge value that are the exact positive
// amounts given, a rate the economy can post a quote around (so no money
// operation fails later on it), and an oracle URL only when it is http(s)
// with a host.
func FuzzEconomyConfig(f *testing.F) {
	f.Add(100.0, 500.0, "", "")
	f.Add(0.000001, 500.0, "", "ops:s")
	f.Add(9e12, 0.5, "https://oracle.example/rate", "")
	f.Add(-1.0, 500.0, "ftp://x", "")
	f.Add(1.0000001, 1e13, "http://", "x")
	f.Add(math.NaN(), math.Inf(1), "https://[::1]:99/r?k=v", "")
	f.Add(100.0, 500.0, "//host/path", "")
	f.Fuzz(func(t *testing.T, ccPerUSD, pledge float64, oracle, signers string) {
		c := Config{CCPerUSD: ccPerUSD, PledgeCCPerHour: pledge, RateOracleURL: oracle, Signers: signers}
		out, err := c.economy()
		if err != nil {
			require.Regexp(t, `^FOUNDRY_[A-Z_]+: `, err.Error())
			return
		}
		rate, rerr := money.FromFloat(ccPerUSD)
		require.NoError(t, rerr)
		require.Positive(t, int64(rate))
		_, qerr := credit.NewQuote(rate, credit.DefaultSpreadBP)
		require.NoError(t, qerr, "rate %v is accepted but cannot be quoted", ccPerUSD)
		p, perr := money.FromFloat(pledge)
		require.NoError(t, perr)
		require.Positive(t, int64(p))
		require.Equal(t, p, out.PledgeRate)
		if oracle == "" {
			require.Equal(t, usecase.FixedRate(rate), out.Rates)
			return
		}
		u, uerr := url.Parse(oracle)
		require.NoError(t, uerr)
		require.Contains(t, []string{"http", "https"}, u.Scheme)
		require.NotEmpty(t, u.Host)
		require.Equal(t, usecase.HTTPRate{URL: oracle}, out.Rates)
	})
}
