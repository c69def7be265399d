package credit_test

import (
	"encoding/binary"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// lines reads journal lines from bytes: each 9-byte record is an account
// number (one of a few, so repeats happen) and a delta.
func lines(b []byte) []credit.Line {
	accounts := []credit.Account{credit.Issuance, credit.Available("ada"), credit.Staked("ada", "i1"), credit.Cooling("ada"), {}}
	var out []credit.Line
	for len(b) >= 9 {
		out = append(out, credit.Line{Account: accounts[int(b[0])%len(accounts)], Delta: money.Micros(int64(binary.LittleEndian.Uint64(b[1:9])))})
		b = b[9:]
	}
	return out
}

// FuzzEntryValidate checks the double-entry rule independently: an entry
// passes exactly when it has a kind, at least two lines, no zero line or
// empty account, no account twice, and lines summing to zero (in exact
// arithmetic, so an overflowing sum never passes); its reversal passes
// with it.
func FuzzEntryValidate(f *testing.F) {
	le := func(a byte, d int64) []byte { return binary.LittleEndian.AppendUint64([]byte{a}, uint64(d)) }
	f.Add("stake", append(le(1, -5), le(2, 5)...))
	f.Add("stake", append(le(1, -5), le(1, 5)...))
	f.Add("deposit", append(le(0, -1<<63), le(1, -1<<63)...))
	f.Add("", append(le(0, -1), le(1, 1)...))
	f.Add("x", le(0, 0))
	f.Add("x", append(append(le(0, 1<<62), le(1, 1<<62)...), le(2, -1<<63)...))
	f.Fuzz(func(t *testing.T, kind string, raw []byte) {
		e := credit.Entry{Kind: credit.Kind(kind), Lines: lines(raw)}
		err := e.Validate()
		ok := kind != "" && len(e.Lines) >= 2
		sum, seen := new(big.Int), map[credit.Account]bool{}
		for _, l := range e.Lines {
			ok = ok && l.Delta != 0 && l.Account != (credit.Account{}) && !seen[l.Account]
			seen[l.Account] = true
			sum.Add(sum, big.NewInt(int64(l.Delta)))
		}
		ok = ok && sum.Sign() == 0
		require.Equal(t, ok, err == nil, "entry %+v: %v", e, err)
	})
}

// FuzzQuote checks the exchange quote's validation and arithmetic: a quote
// is posted only for a positive mid and a spread strictly between 0 and
// 100 %, with Buy < Mid < Sell; a deposit never mints more than the buy
// rate gives and a withdrawal never pays more than the sell rate gives
// (exact 128-bit checks), so the spread always stays with the treasury.
func FuzzQuote(f *testing.F) {
	f.Add(int64(100_000_000), int64(100), int64(1_000_000), int64(1_000_000))
	f.Add(int64(1), int64(1), int64(1), int64(1))
	f.Add(int64(0), int64(100), int64(1), int64(1))
	f.Add(int64(100), int64(10_000), int64(1), int64(1))
	f.Add(int64(9_000_000_000_000_000_000), int64(9_999), int64(9_000_000_000_000_000_000), int64(-1))
	f.Add(int64(3), int64(5_000), int64(7), int64(11))
	f.Fuzz(func(t *testing.T, mid, spread, usd, cc int64) {
		q, err := credit.NewQuote(money.Micros(mid), spread)
		if mid <= 0 || spread <= 0 || spread >= 10_000 {
			require.ErrorIs(t, err, credit.ErrBadRate)
			return
		}
		if err != nil {
			require.ErrorIs(t, err, credit.ErrBadRate)
			// Refused only when half the spread would eat the whole rate
			// or the sell rate would not fit an int64.
			half := new(big.Int).Mul(big.NewInt(mid), big.NewInt(spread))
			half.Add(half, big.NewInt(2*10_000-1)).Quo(half, big.NewInt(2*10_000))
			sell := new(big.Int).Add(big.NewInt(mid), half)
			require.True(t, half.Cmp(big.NewInt(mid)) >= 0 || !sell.IsInt64(), "mid %d, spread %d refused", mid, spread)
			return
		}
		require.Less(t, q.Buy, q.Mid)
		require.Less(t, q.Mid, q.Sell)
		require.Positive(t, int64(q.Buy))

		scale := big.NewInt(money.Scale)
		if minted, fee, err := q.Mint(money.Micros(usd)); err == nil {
			require.Positive(t, usd)
			// minted ≤ usd × Buy / Scale
			lhs := new(big.Int).Mul(big.NewInt(int64(minted)), scale)
			require.LessOrEqual(t, lhs.Cmp(new(big.Int).Mul(big.NewInt(usd), big.NewInt(int64(q.Buy)))), 0)
			require.GreaterOrEqual(t, int64(fee), int64(0), "the treasury keeps the spread")
		} else {
			require.True(t, usd <= 0 || strings.Contains(err.Error(), "large"), "usd=%d: %v", usd, err)
		}
		if paid, fee, err := q.Burn(money.Micros(cc)); err == nil {
			require.Positive(t, cc)
			// paid ≤ cc × Scale / Sell
			lhs := new(big.Int).Mul(big.NewInt(int64(paid)), big.NewInt(int64(q.Sell)))
			require.LessOrEqual(t, lhs.Cmp(new(big.Int).Mul(big.NewInt(cc), scale)), 0)
			require.GreaterOrEqual(t, int64(fee), int64(0), "the treasury keeps the spread")
		} else {
			require.True(t, cc <= 0 || strings.Contains(err.Error(), "large"), "cc=%d: %v", cc, err)
		}
	})
}

// FuzzBacked checks the backing invariant against exact arithmetic:
// outstanding × Scale ≤ treasury × mid, with nothing outstanding always
// backed and a non-positive treasury or rate never backing anything.
func FuzzBacked(f *testing.F) {
	f.Add(int64(100), int64(1), int64(100_000_000))
	f.Add(int64(0), int64(-1), int64(0))
	f.Add(int64(1<<62), int64(1<<62), int64(1<<62))
	f.Add(int64(1_000_001), int64(10_000), int64(100_000_000))
	f.Fuzz(func(t *testing.T, outstanding, treasury, mid int64) {
		got := credit.Backed(money.Micros(outstanding), money.Micros(treasury), money.Micros(mid))
		var want bool
		switch {
		case outstanding <= 0:
			want = true
		case treasury <= 0 || mid <= 0:
			want = false
		default:
			l := new(big.Int).Mul(big.NewInt(outstanding), big.NewInt(money.Scale))
			want = l.Cmp(new(big.Int).Mul(big.NewInt(treasury), big.NewInt(mid))) <= 0
		}
		require.Equal(t, want, got)
	})
}

// FuzzBreaker checks the oracle circuit breaker's arithmetic against exact
// arithmetic: the average is the true mean (truncated) of the accepted
// readings in the window, and a reading deviates exactly when
// |price - avg| / avg > MaxDeviationBP / 10000, however large the prices.
func FuzzBreaker(f *testing.F) {
	f.Add(int64(100_000_000), int64(100_000_000), int64(2000), int64(100_000_000))
	f.Add(int64(1_000_000_000_000_000), int64(100_000_000), int64(2000), int64(9_000_000_000_000_000_000))
	f.Add(int64(120_000_001), int64(100_000_000), int64(2000), int64(1))
	f.Add(int64(1), int64(9_223_372_036_854_775_807), int64(10_000), int64(9_223_372_036_854_775_807))
	f.Fuzz(func(t *testing.T, price, avg, bp, other int64) {
		if avg <= 0 || bp < 0 {
			return // the breaker compares with a positive average only
		}
		b := credit.Breaker{Window: time.Hour, MaxDeviationBP: bp, RecoverAfter: 3}
		d := new(big.Int).Abs(new(big.Int).Sub(big.NewInt(price), big.NewInt(avg)))
		lhs := d.Mul(d, big.NewInt(10_000))
		rhs := new(big.Int).Mul(big.NewInt(bp), big.NewInt(avg))
		require.Equal(t, lhs.Cmp(rhs) > 0, b.Deviates(money.Micros(price), money.Micros(avg)), "price %d, avg %d, bp %d", price, avg, bp)

		at := time.Unix(1_700_000_000, 0)
		readings := []credit.Reading{
			{Price: money.Micros(price), At: at.Add(-time.Minute), Verdict: credit.Accepted},
			{Price: money.Micros(other), At: at.Add(-2 * time.Minute), Verdict: credit.Accepted},
			{Price: money.Micros(avg), At: at.Add(-time.Second), Verdict: credit.Accepted},
			{Price: money.Micros(other), At: at.Add(-2 * time.Hour), Verdict: credit.Accepted}, // outside the window
			{Price: money.Micros(price), At: at, Verdict: credit.Accepted},                     // not before at
			{Price: money.Micros(other), At: at.Add(-3 * time.Minute), Verdict: credit.Held},   // refused
		}
		got, ok := b.AcceptedAverage(readings, at)
		require.True(t, ok)
		sum := new(big.Int).Add(big.NewInt(price), big.NewInt(other))
		sum.Add(sum, big.NewInt(avg))
		require.Equal(t, sum.Quo(sum, big.NewInt(3)).Int64(), int64(got))
	})
}

// FuzzPledgeValue checks a pledge's value: hours × rate exactly (rounded
// down to a micro-unit), and out of range rather than wrapped around for
// negative or huge inputs.
func FuzzPledgeValue(f *testing.F) {
	f.Add(int64(1_500_000), int64(500_000_000))
	f.Add(int64(-1), int64(500_000_000))
	f.Add(int64(1<<62), int64(1<<62))
	f.Add(int64(1), int64(1))
	f.Fuzz(func(t *testing.T, microHours, rate int64) {
		v, err := credit.PledgeValue(money.Micros(microHours), money.Micros(rate))
		if microHours < 0 || rate < 0 {
			require.ErrorIs(t, err, money.ErrOutOfRange)
			return
		}
		want := new(big.Int).Mul(big.NewInt(microHours), big.NewInt(rate))
		want.Quo(want, big.NewInt(money.Scale))
		if !want.IsInt64() {
			require.ErrorIs(t, err, money.ErrOutOfRange)
			return
		}
		require.NoError(t, err)
		require.Equal(t, want.Int64(), int64(v))
	})
}

// FuzzAccountNames checks an account's name is a key that never joins two
// accounts: two contributors' accounts, or two stakes, have the same name
// exactly when they are the same account, whatever ':' or '%' the ids
// hold, and accounts of different buckets never share a name.
func FuzzAccountNames(f *testing.F) {
	f.Add("ada", "idea-1", "ada", "idea-1")
	f.Add("", "", "", "")
	f.Add("github:octo", "x", "github", "octo:x")
	f.Add("a%3Ab", "c", "a:b", "c")
	f.Add("bob", "ghost", "bob:ghost", "")
	f.Add("日本", "\xff", "日本", "\xff")
	f.Fuzz(func(t *testing.T, c1, i1, c2, i2 string) {
		same := c1 == c2 && i1 == i2
		require.Equal(t, same, credit.Staked(c1, i1).Name() == credit.Staked(c2, i2).Name(),
			"staked (%q, %q) and (%q, %q)", c1, i1, c2, i2)
		require.Equal(t, c1 == c2, credit.Available(c1).Name() == credit.Available(c2).Name())
		require.Equal(t, c1 == c2, credit.Cooling(c1).Name() == credit.Cooling(c2).Name())
		names := map[string]credit.Account{}
		for _, a := range []credit.Account{credit.Issuance, credit.Available(c1), credit.Cooling(c1), credit.Staked(c1, i1),
			credit.Available(c2), credit.Cooling(c2), credit.Staked(c2, i2)} {
			if prev, ok := names[a.Name()]; ok {
				require.Equal(t, prev, a, "one name, one account: %q", a.Name())
			}
			names[a.Name()] = a
		}
		require.False(t, credit.Available(c1).MayGoNegative())
	})
}

// FuzzAmount checks the amount rule of every money request (deposit,
// withdraw, stake, unstake, pledge, oracle reading): accepted only when more
// than zero, at most the limit and exactly the number sent; refused as a 422
// naming the field, never anything else.
func FuzzAmount(f *testing.F) {
	for _, x := range []float64{1, 0, -0.5, 1e-6, 1e-7, 1e9, 1e9 + 1e-6, 9e12, math.NaN(), math.Inf(1), 0.1 + 0.2} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		for _, limit := range []money.Micros{credit.MaxCC, credit.MaxUSD, credit.MaxHours, money.Scale} {
			m, err := credit.Amount("amount_cc", x, limit)
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

// FuzzText checks the short free-text rule (references, reasons): a needed
// field must not be blank, and no field may pass MaxText bytes; refusals
// are 422s naming the field.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", " ", "ref-1", strings.Repeat("x", credit.MaxText), strings.Repeat("é", credit.MaxText/2+1), "\xff", "\u00a0"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, v string, needed bool) {
		err := credit.Text("reason", v, needed)
		if (!needed || strings.TrimSpace(v) != "") && len(v) <= credit.MaxText {
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
