package attribution_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// invalidFields returns the fields of a 422, failing the test for any other
// error.
func invalidFields(t *testing.T, err error) []string {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want a validation error, got %v", err)
	require.Equal(t, fault.Invalid, fe.Kind, "a bad value is a 422: %v", err)
	var out []string
	for _, f := range fe.Fields {
		out = append(out, f.Field)
	}
	return out
}

// textOK is the rule for asset names and descriptions.
func textOK(s string, maxLen int) bool {
	return utf8.ValidString(s) && utf8.RuneCountInString(s) <= maxLen
}

// FuzzValidateAsset checks an asset is accepted exactly when its type is
// one of the contract's and its name and description are valid UTF-8
// within their lengths, and that a refusal names every bad field.
func FuzzValidateAsset(f *testing.F) {
	f.Add("CODE", "app", "")
	f.Add("code", "app", "d")
	f.Add("DATA", strings.Repeat("é", 200), strings.Repeat("x", 10_000))
	f.Add("MODEL", strings.Repeat("é", 201), "\xff")
	f.Add("", "", "")
	f.Add("CONTENT", "a\x00b", "\u202e")
	f.Fuzz(func(t *testing.T, typ, name, description string) {
		err := attribution.ValidateAsset(typ, name, description)
		var want []string
		if !slices.Contains(attribution.Types, typ) {
			want = append(want, "type")
		}
		if !textOK(name, attribution.MaxNameLen) {
			want = append(want, "name")
		}
		if !textOK(description, attribution.MaxDescriptionLen) {
			want = append(want, "description")
		}
		if len(want) == 0 {
			require.NoError(t, err)
			return
		}
		require.Equal(t, want, invalidFields(t, err))
	})
}

// FuzzValidateContributorID checks a contributor id passes exactly when it
// is valid UTF-8, not blank, at most MaxContributorIDLen characters and
// free of control characters (it is shown in lists and logs).
func FuzzValidateContributorID(f *testing.F) {
	for _, s := range []string{"ada", "github:octocat", "email:a@b.c", "", "   ", "\t", "a\nb", "a\x7fb", "\u0085", "\xff",
		strings.Repeat("é", 256), strings.Repeat("é", 257), "\u2028", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := attribution.ValidateContributorID(id)
		ok := utf8.ValidString(id) && strings.TrimSpace(id) != "" && utf8.RuneCountInString(id) <= attribution.MaxContributorIDLen
		for _, r := range id {
			ok = ok && !unicode.IsControl(r)
		}
		if ok {
			require.NoError(t, err, "id %q", id)
			return
		}
		require.Equal(t, []string{"contributor_id"}, invalidFields(t, err), "id %q", id)
	})
}

// FuzzCheckMetadata checks contribution metadata, as the gateway's JSON
// becomes it (a protobuf Struct), is stored only when its JSON fits the
// limit, and that Score reads every storable metadata without a 5xx.
func FuzzCheckMetadata(f *testing.F) {
	f.Add([]byte(`{"has_tests":true,"has_docs":false,"complexity":"low"}`))
	f.Add([]byte(`{"has_tests":"yes","complexity":1}`))
	f.Add([]byte(`{"big":"` + strings.Repeat("x", attribution.MaxMetadataBytes) + `"}`))
	f.Add([]byte(`{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`))
	f.Add([]byte(`{"n":1e308,"m":-0,"u":"\ud800"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var s structpb.Struct
		if err := s.UnmarshalJSON(body); err != nil {
			return
		}
		meta := s.AsMap()
		err := attribution.CheckMetadata(meta)
		b, jerr := json.Marshal(meta)
		require.NoError(t, jerr, "a Struct from JSON is always plain JSON")
		if len(b) <= attribution.MaxMetadataBytes {
			require.NoError(t, err)
		} else {
			require.Equal(t, []string{"metadata"}, invalidFields(t, err))
		}
		c, err := attribution.Score(meta)
		if err != nil {
			for _, field := range invalidFields(t, err) {
				require.Contains(t, []string{"metadata.has_tests", "metadata.has_docs", "metadata.complexity"}, field)
			}
			return
		}
		require.GreaterOrEqual(t, c, attribution.CoherenceBase)
		require.LessOrEqual(t, c, attribution.CoherenceMax)
	})
}

// FuzzAmount checks a request amount becomes micro-units only when it is
// finite, not negative, at most MaxAmount, and exactly the number sent;
// anything else is a 422 on the field.
func FuzzAmount(f *testing.F) {
	for _, x := range []float64{0, 1.5, -0.000001, 1e9, 1e9 + 0.000001, 1e9 + 1, 0.1234567, math.Inf(-1), math.NaN(), 5e-324} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		m, err := attribution.Amount("cost_amount", x)
		if err != nil {
			require.Equal(t, []string{"cost_amount"}, invalidFields(t, err))
			if m2, ferr := money.FromFloat(x); ferr == nil {
				require.True(t, m2 < 0 || m2 > attribution.MaxAmount, "%v refused though in range", x)
			}
			return
		}
		require.GreaterOrEqual(t, m, money.Micros(0))
		require.LessOrEqual(t, m, attribution.MaxAmount)
		require.Equal(t, x, m.Float64(), "the amount is the number sent")
	})
}

// FuzzSplit checks a distribution's payouts add up to its value exactly,
// whatever the value and the stakes: stakes are read from raw, 7 bytes
// each (a contributor out of 8, so stakes share contributors; a cost of up
// to 2^40 micro-units; a coherence).
func FuzzSplit(f *testing.F) {
	stake := func(id byte, cost uint64, coherence byte) []byte {
		return append([]byte{id}, byte(cost), byte(cost>>8), byte(cost>>16), byte(cost>>24), byte(cost>>32), coherence)
	}
	f.Add(int64(100_000_000), slices.Concat(stake(0, 1, 0), stake(1, 1, 0), stake(2, 1, 0)))
	f.Add(int64(10_000), slices.Concat(stake(0, 1, 0), stake(1, 1, 0)))
	f.Add(int64(9_998), slices.Concat(stake(0, 1, 0), stake(1, 1, 0), stake(2, 1, 0)))
	f.Add(int64(attribution.MaxAmount), slices.Concat(stake(0, 1<<40-1, 255), stake(1, 3, 7), stake(2, 0, 9)))
	f.Add(int64(1), stake(0, 0, 0))
	f.Fuzz(func(t *testing.T, value int64, raw []byte) {
		if value < 0 || value > int64(attribution.MaxAmount) {
			return // a 422 before Split runs
		}
		var stakes []attribution.Stake
		ids := map[string]bool{}
		var weighs bool
		for ; len(raw) >= 7; raw = raw[7:] {
			cost := money.Micros(uint64(raw[1]) | uint64(raw[2])<<8 | uint64(raw[3])<<16 | uint64(raw[4])<<24 | uint64(raw[5])<<32)
			s := attribution.Stake{ContributorID: string(rune('a' + raw[0]%8)), Cost: cost,
				Coherence: attribution.Coherence(int(raw[6]) * int(attribution.CoherenceMax) / 255)}
			stakes = append(stakes, s)
			ids[s.ContributorID] = true
			weighs = weighs || cost > 0
		}
		got := attribution.Split(money.Micros(value), stakes)
		if !weighs {
			require.Empty(t, got, "no weight, no payouts")
			return
		}
		require.Len(t, got, len(ids), "one payout per contributor")
		requireAddsUp(t, money.Micros(value), got)
	})
}
