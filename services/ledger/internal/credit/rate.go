// Package credit holds the rules of the credit economy: the exchange quote
// with its posted spread, what a deposit mints and a withdrawal burns, the
// backing invariant, unstake cooldown tiers, the oracle circuit breaker and
// the shape of a balanced journal entry. It has no SQL and no proto: the use
// cases apply these rules inside one transaction.
//
// Every quantity is an integer number of micro-units (money.Micros): CC
// amounts in micro-CC, USD amounts in micro-USD, and the exchange rate in
// micro-CC per USD. Products of two amounts are taken in 128 bits so that no
// intermediate result overflows or is rounded through a float.
package credit

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// DefaultSpreadBP is the posted spread: 1 % (100 basis points) between the
// buy and the sell rate.
const DefaultSpreadBP = 100

// bpScale is one whole in basis points.
const bpScale = 10_000

// ErrBadRate reports a rate or spread the economy cannot quote with.
var ErrBadRate = errors.New("exchange rate must be positive and the spread between 0 and 100%")

// Quote is the exchange rate Foundry posts. Rates are CC per USD in
// micro-units: a deposit of one USD mints Buy micro-CC, and one USD is paid
// out for every Sell micro-CC burned. Buy < Mid < Sell, so the spread always
// stays with the treasury.
type Quote struct {
	// Mid is the reference rate (from the rate source, or the breaker's
	// last good value).
	Mid money.Micros
	// Buy is what a deposit mints per USD: Mid less half the spread.
	Buy money.Micros
	// Sell is what a withdrawal burns per USD: Mid plus half the spread.
	Sell money.Micros
	// SpreadBP is the spread in basis points (100 is 1 %).
	SpreadBP int64
}

// NewQuote posts a quote around mid with the spread split evenly between
// the two sides. Each half is rounded up, so the quote never gives away a
// micro-unit and Buy < Mid < Sell holds for every positive mid.
func NewQuote(mid money.Micros, spreadBP int64) (Quote, error) {
	if mid <= 0 || spreadBP <= 0 || spreadBP >= bpScale {
		return Quote{}, ErrBadRate
	}
	// mid × spread in 128 bits: with 64 a large rate wrapped around to a
	// zero spread (Buy = Mid = Sell). hi < 2*bpScale since spreadBP < bpScale.
	hi, lo := bits.Mul64(uint64(mid), uint64(spreadBP))
	q, r := bits.Div64(hi, lo, 2*bpScale)
	if r != 0 {
		q++
	}
	half := money.Micros(q)
	if half >= mid || mid > math.MaxInt64-half {
		return Quote{}, ErrBadRate
	}
	return Quote{Mid: mid, Buy: mid - half, Sell: mid + half, SpreadBP: spreadBP}, nil
}

// SpreadPct is the spread as the API shows it (1.0 for 1 %).
func (q Quote) SpreadPct() float64 { return float64(q.SpreadBP) / 100 }

// USDPerCC is the mid rate inverted, the exchange rate in the form of the
// backing invariant (treasury_value_usd / exchange_rate).
func (q Quote) USDPerCC() float64 {
	if q.Mid <= 0 {
		return 0
	}
	return float64(money.Scale) / float64(q.Mid)
}

// Mint is what a deposit of usd micro-USD creates: cc micro-CC at the buy
// rate, rounded down, and the spread it keeps, in micro-USD at the mid rate
// (the USD paid less the mid value of the CC received).
func (q Quote) Mint(usd money.Micros) (cc, feeUSD money.Micros, err error) {
	if usd <= 0 {
		return 0, 0, errors.New("deposit must be positive")
	}
	c, ok := mulDivFloor(uint64(usd), uint64(q.Buy), money.Scale)
	if !ok {
		return 0, 0, money.ErrOutOfRange
	}
	atMid, _ := mulDivFloor(c, money.Scale, uint64(q.Mid))
	return money.Micros(c), usd - money.Micros(atMid), nil
}

// Burn is what a withdrawal of cc micro-CC pays out: usd micro-USD at the
// sell rate, rounded down, and the spread it keeps, in micro-USD (the mid
// value of the CC less the USD paid).
func (q Quote) Burn(cc money.Micros) (usd, feeUSD money.Micros, err error) {
	if cc <= 0 {
		return 0, 0, errors.New("withdrawal must be positive")
	}
	u, ok := mulDivFloor(uint64(cc), money.Scale, uint64(q.Sell))
	if !ok {
		return 0, 0, money.ErrOutOfRange
	}
	atMid, _ := mulDivFloor(uint64(cc), money.Scale, uint64(q.Mid))
	return money.Micros(u), money.Micros(atMid) - money.Micros(u), nil
}

// Backed reports the backing invariant: outstanding CC is no more than the
// treasury's USD converted at the mid rate,
// total_cc_outstanding ≤ treasury_value_usd / exchange_rate
// (exchange_rate in USD per CC), compared exactly in 128 bits.
func Backed(outstandingCC, treasuryUSD, mid money.Micros) bool {
	if outstandingCC <= 0 {
		return true
	}
	if treasuryUSD <= 0 || mid <= 0 {
		return false
	}
	// outstanding * Scale <= treasury * mid
	lh, ll := bits.Mul64(uint64(outstandingCC), money.Scale)
	rh, rl := bits.Mul64(uint64(treasuryUSD), uint64(mid))
	return lh < rh || (lh == rh && ll <= rl)
}

// RaisesRatio reports whether a movement that takes the CC outstanding
// from o1 to o2 and the treasury from t1 to t2 raises the reserve ratio
// (t × mid / o), exactly: t2/o2 > t1/o1, compared as t2 × o1 > t1 × o2 in
// 128 bits, the rate cancelling out. With nothing outstanding before, the
// ratio is 1.0 by definition, and it is raised when the movement leaves
// the economy backed above 1.0 (mid is needed then only).
func RaisesRatio(o1, t1, o2, t2, mid money.Micros) bool {
	switch {
	case o2 <= 0:
		return false
	case o1 <= 0:
		// o2 × Scale < t2 × mid: backed strictly above 1.0.
		lh, ll := bits.Mul64(uint64(o2), money.Scale)
		rh, rl := bits.Mul64(uint64(max(t2, 0)), uint64(max(mid, 0)))
		return lh < rh || (lh == rh && ll < rl)
	}
	lh, ll := bits.Mul64(uint64(max(t2, 0)), uint64(o1))
	rh, rl := bits.Mul64(uint64(max(t1, 0)), uint64(o2))
	return lh > rh || (lh == rh && ll > rl)
}

// ErrSupplyLimit reports a movement that would take the CC outstanding or
// the treasury past what the ledger can count (an int64 of micro-units,
// about 9.2 trillion): refused, rather than wrapped around to a negative
// total that then read as a backing failure.
var ErrSupplyLimit = errors.New("supply limit reached")

// NextSupply is the CC outstanding and the treasury after a movement that
// mints mint, burns burn and moves treasuryDelta USD, added exactly;
// ErrSupplyLimit when either result would not fit an int64. Whether the
// results are backed (or negative) is the caller's check.
func NextSupply(outstanding, treasury, mint, burn, treasuryDelta money.Micros) (money.Micros, money.Micros, error) {
	o, ok1 := addChecked(outstanding, mint)
	if ok1 {
		o, ok1 = subChecked(o, burn)
	}
	t, ok2 := addChecked(treasury, treasuryDelta)
	if !ok1 || !ok2 {
		return outstanding, treasury, ErrSupplyLimit
	}
	return o, t, nil
}

// addChecked is a+b; ok is false when it overflows an int64.
func addChecked(a, b money.Micros) (money.Micros, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// subChecked is a-b; ok is false when it overflows an int64.
func subChecked(a, b money.Micros) (money.Micros, bool) {
	if (b < 0 && a > math.MaxInt64+b) || (b > 0 && a < math.MinInt64+b) {
		return 0, false
	}
	return a - b, true
}

// ReserveRatio is the treasury's value at the mid rate over the CC
// outstanding: 1.0 when nothing is outstanding (nothing to back), and the
// invariant holds exactly when the ratio is at least 1.
func ReserveRatio(outstandingCC, treasuryUSD, mid money.Micros) float64 {
	if outstandingCC <= 0 {
		return 1
	}
	backing := float64(treasuryUSD) * float64(mid) / money.Scale
	return math.Round(backing/float64(outstandingCC)*1e6) / 1e6
}

// mulDivFloor computes a*b/c rounded down with a 128-bit intermediate; ok is
// false when the result does not fit in an int64.
func mulDivFloor(a, b, c uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, c)
	return q, q <= math.MaxInt64
}

// String prints the quote for logs.
func (q Quote) String() string {
	return fmt.Sprintf("mid=%s buy=%s sell=%s spread=%d bp", q.Mid, q.Buy, q.Sell, q.SpreadBP)
}
