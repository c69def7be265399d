package handler

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// FuzzPositive checks the amount rule of every money request (deposit,
// withdraw, stake, unstake, oracle reading): accepted only when more than
// zero, at most the limit and exactly the number sent; refused as a 422
// naming the field, never anything else.
func FuzzPositive(f *testing.F) {
	for _, x := range []float64{1, 0, -0.5, 1e-6, 1e-7, 1e9, 1e9 + 1e-6, 9e12, math.NaN(), math.Inf(1), 0.1 + 0.2} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		for _, limit := range []money.Micros{maxCC, maxUSD, money.Scale} {
			m, err := positive("amount_cc", x, limit)
			if err != nil {
				fe, ok := fault.As(err)
				require.True(t, ok, "%v: %v", x, err)
				require.Equal(t, fault.Invalid, fe.Kind)
				require.Equal(t, "amount_cc", fe.Fields[0].Field)
				if exact, ferr := money.FromFloat(x); ferr == nil {
					require.True(t, exact <= 0 || exact > limit, "%v refused though in range", x)
				}
				continue
			}
			require.Positive(t, int64(m))
			require.LessOrEqual(t, m, limit)
			require.Equal(t, x, m.Float64())
		}
	})
}

// FuzzText checks the short free-text rule (references, reasons, signer
// ids): a needed field must not be blank, and no field may pass maxText
// bytes; refusals are 422s naming the field.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", " ", "ref-1", strings.Repeat("x", maxText), strings.Repeat("é", maxText/2+1), "\xff", "\u00a0"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, v string, needed bool) {
		err := text("reason", v, needed)
		if (!needed || strings.TrimSpace(v) != "") && len(v) <= maxText {
			require.NoError(t, err)
			return
		}
		fe, ok := fault.As(err)
		require.True(t, ok, "%q: %v", v, err)
		require.Equal(t, fault.Invalid, fe.Kind)
		require.Equal(t, []fault.FieldError{fe.Fields[0]}, fe.Fields)
		require.Equal(t, "reason", fe.Fields[0].Field)
	})
}
