package attribution_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// requireField checks err is a validation failure naming field.
func requireField(t *testing.T, err error, field string) {
	t.Helper()
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok, "want a fault.Error, got %v", err)
	require.Equal(t, fault.Invalid, fe.Kind)
	var got []string
	for _, f := range fe.Fields {
		got = append(got, f.Field)
	}
	require.Contains(t, got, field, "fields of %v", err)
}

func TestValidateAsset(t *testing.T) {
	t.Parallel()
	for _, typ := range attribution.Types {
		require.NoError(t, attribution.ValidateAsset(typ, "name", ""), typ)
	}
	tests := []struct {
		name, typ, assetName, field string
	}{
		{"lowercase type", "code", "", "type"},
		{"unknown type", "VIDEO", "", "type"},
		{"empty type", "", "", "type"},
		{"long name", "DATA", strings.Repeat("n", attribution.MaxNameLen+1), "name"},
		{"invalid UTF-8 name", "DATA", "\xff", "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireField(t, attribution.ValidateAsset(tt.typ, tt.assetName, ""), tt.field)
		})
	}
}

func TestValidateContributorID(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"alice", "github:codertocat", "3f1c…", "a b"} {
		require.NoError(t, attribution.ValidateContributorID(ok), ok)
	}
	for _, bad := range []string{"", "   ", "tab\tinside", strings.Repeat("x", attribution.MaxContributorIDLen+1), "\xfe"} {
		requireField(t, attribution.ValidateContributorID(bad), "contributor_id")
	}
}

func TestAmount(t *testing.T) {
	t.Parallel()
	got, err := attribution.Amount("cost_amount", 12.345678)
	require.NoError(t, err)
	require.Equal(t, money.Micros(12_345_678), got)
	got, err = attribution.Amount("cost_amount", 0)
	require.NoError(t, err)
	require.Equal(t, money.Micros(0), got)
	for name, bad := range map[string]float64{
		"negative": -0.01, "NaN": math.NaN(), "Inf": math.Inf(1), "seven decimals": 1.0000001, "over the maximum": 1e9 + 1,
	} {
		_, err := attribution.Amount("cost_amount", bad)
		requireField(t, err, "cost_amount")
		require.NotEmpty(t, name)
	}
}

func TestCheckMetadata(t *testing.T) {
	t.Parallel()
	require.NoError(t, attribution.CheckMetadata(nil))
	require.NoError(t, attribution.CheckMetadata(map[string]any{"a": []any{1.0, "x", nil}, "b": map[string]any{"c": true}}))
	requireField(t, attribution.CheckMetadata(map[string]any{"n": math.NaN()}), "metadata")
	requireField(t, attribution.CheckMetadata(map[string]any{"n": math.Inf(-1)}), "metadata")
	requireField(t, attribution.CheckMetadata(map[string]any{"big": strings.Repeat("x", attribution.MaxMetadataBytes)}), "metadata")
}

func TestPageLimit(t *testing.T) {
	t.Parallel()
	i32 := func(v int32) *int32 { return &v }
	limit, offset, err := attribution.PageLimit(nil, 0)
	require.NoError(t, err)
	require.Equal(t, []int{attribution.DefaultLimit, 0}, []int{limit, offset})
	limit, offset, err = attribution.PageLimit(i32(500), 7)
	require.NoError(t, err)
	require.Equal(t, []int{500, 7}, []int{limit, offset})
	for _, bad := range []int32{0, 501, -1} {
		_, _, err = attribution.PageLimit(i32(bad), 0)
		requireField(t, err, "limit")
	}
	_, _, err = attribution.PageLimit(i32(10), -1)
	requireField(t, err, "offset")
}

func TestContributionPage(t *testing.T) {
	t.Parallel()
	limit, offset, err := attribution.ContributionPage(nil, 3)
	require.NoError(t, err)
	require.Equal(t, []int{attribution.MaxContributionPage, 3}, []int{limit, offset})
	one := int32(1)
	limit, _, err = attribution.ContributionPage(&one, 0)
	require.NoError(t, err)
	require.Equal(t, 1, limit)
	for _, bad := range []int32{0, -1, attribution.MaxContributionPage + 1} {
		_, _, err = attribution.ContributionPage(&bad, 0)
		requireField(t, err, "limit")
	}
	_, _, err = attribution.ContributionPage(nil, -1)
	requireField(t, err, "offset")
}

func TestPayoutAndDistributionPages(t *testing.T) {
	t.Parallel()
	i32 := func(v int32) *int32 { return &v }
	tests := []struct {
		name       string
		page       func(*int32, int32) (int, int, error)
		limit      *int32
		offset     int32
		want       []int
		wrongField string
	}{
		{"payouts: default", attribution.PayoutPage, nil, 0, []int{attribution.DefaultPayoutPage, 0}, ""},
		{"payouts: largest", attribution.PayoutPage, i32(attribution.MaxPayoutPage), 5, []int{attribution.MaxPayoutPage, 5}, ""},
		{"payouts: zero", attribution.PayoutPage, i32(0), 0, nil, "limit"},
		{"payouts: past the maximum", attribution.PayoutPage, i32(attribution.MaxPayoutPage + 1), 0, nil, "limit"},
		{"payouts: negative offset", attribution.PayoutPage, nil, -1, nil, "offset"},
		{"distributions: default", attribution.DistributionPage, nil, 3, []int{attribution.DefaultDistributionPage, 3}, ""},
		{"distributions: one", attribution.DistributionPage, i32(1), 0, []int{1, 0}, ""},
		{"distributions: past the maximum", attribution.DistributionPage, i32(attribution.MaxDistributionPage + 1), 0, nil, "limit"},
		{"distributions: negative limit", attribution.DistributionPage, i32(-1), 0, nil, "limit"},
		{"distributions: negative offset", attribution.DistributionPage, i32(1), -5, nil, "offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			limit, offset, err := tt.page(tt.limit, tt.offset)
			if tt.wrongField != "" {
				requireField(t, err, tt.wrongField)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, []int{limit, offset}, "got limit, offset %d, %d; want %v", limit, offset, tt.want)
		})
	}
}

func TestScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		meta map[string]any
		want float64
	}{
		{"no metadata", nil, 0.5},
		{"tests", map[string]any{"has_tests": true}, 0.7},
		{"docs", map[string]any{"has_docs": true}, 0.7},
		{"low complexity", map[string]any{"complexity": "low"}, 0.6},
		{"other complexity", map[string]any{"complexity": "high"}, 0.5},
		{"false flags earn nothing", map[string]any{"has_tests": false, "has_docs": false}, 0.5},
		{"tests and docs", map[string]any{"has_tests": true, "has_docs": true}, 0.9},
		{"everything is capped at 1.0", map[string]any{"has_tests": true, "has_docs": true, "complexity": "low"}, 1.0},
		{"null values are absent", map[string]any{"has_tests": nil, "complexity": nil}, 0.5},
		{"unrelated keys are ignored", map[string]any{"files": 3.0}, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := attribution.Score(tt.meta)
			require.NoError(t, err)
			require.Equal(t, tt.want, got.Float64())
		})
	}
	t.Run("wrong types are 422", func(t *testing.T) {
		t.Parallel()
		_, err := attribution.Score(map[string]any{"has_tests": "yes"})
		requireField(t, err, "metadata.has_tests")
		_, err = attribution.Score(map[string]any{"has_docs": 1.0})
		requireField(t, err, "metadata.has_docs")
		_, err = attribution.Score(map[string]any{"complexity": true})
		requireField(t, err, "metadata.complexity")
	})
}

func TestEstimateCost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		files, lines int64
		want         float64
	}{
		{0, 0, 0.10},
		{1, 0, 0.25},
		{2, 100, 0.60},
		{10, 1000, 3.60},
		{100, 0, 10.00},
		{0, 1_000_000, 10.00},
		{math.MaxInt64, math.MaxInt64, 10.00},
		{-5, -5, 0.10},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d files %d lines", tt.files, tt.lines), func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, attribution.EstimateCost(tt.files, tt.lines).Float64())
		})
	}
}

func TestComplexity(t *testing.T) {
	t.Parallel()
	require.Equal(t, "low", attribution.Complexity(0))
	require.Equal(t, "low", attribution.Complexity(3))
	require.Equal(t, "medium", attribution.Complexity(4))
	require.Equal(t, "medium", attribution.Complexity(10))
	require.Equal(t, "high", attribution.Complexity(11))
}
