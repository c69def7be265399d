// Package impact holds the rules of an idea's proven impact (credit rule
// 3): how a usage record grows the attribution of the positions staked on
// the idea, and how a revenue record's CC is paid to them. Pure: amounts
// in, amounts out; the use case reads the positions and records the
// result.
package impact

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// The kinds of impact record.
const (
	// KindUsage is measured downstream usage: a quantity of a unit.
	KindUsage = "usage"
	// KindRevenue is USD the idea brought, paid to its stakers as CC.
	KindRevenue = "revenue"
)

// DefaultUsageRate is the attribution a usage record adds to a position
// per unit of usage, as a share of the position's amount: 0.01 (1 %).
const DefaultUsageRate money.Micros = 10_000

// MaxQuantity bounds one usage record's quantity: a billion units.
const MaxQuantity = money.Micros(1_000_000_000) * money.Scale

// MaxEarned caps a position's earned attribution: a thousand times the
// most CC there can be staked (credit.MaxCC per movement is a billion),
// so sums of earned attribution over any number of records and positions
// stay far inside an int64 (9.2e18 micro-CC). Earned attribution only
// weighs a revenue split; the cap makes no CC.
const MaxEarned = money.Micros(1_000_000_000_000) * money.Scale

// Position is one contributor's stake on the idea as the rules see it.
type Position struct {
	ContributorID string
	// Amount is the CC staked now; Earned the attribution usage added.
	Amount money.Micros
	Earned money.Micros
}

// Earned is the attribution one usage record adds to a position of amount
// staked CC: amount × rate × quantity (rate and quantity in micro-units),
// rounded down to the micro-CC and capped at MaxEarned. Computed with big
// integers: the product of three int64s does not fit in one.
func Earned(amount, quantity, rate money.Micros) money.Micros {
	if amount <= 0 || quantity <= 0 || rate <= 0 {
		return 0
	}
	p := big.NewInt(int64(amount))
	p.Mul(p, big.NewInt(int64(rate)))
	p.Mul(p, big.NewInt(int64(quantity)))
	p.Quo(p, big.NewInt(money.Scale*money.Scale))
	if !p.IsInt64() || p.Int64() > int64(MaxEarned) {
		return MaxEarned
	}
	return money.Micros(p.Int64())
}

// AddEarned is earned plus more, capped at MaxEarned.
func AddEarned(earned, more money.Micros) money.Micros {
	if more >= MaxEarned-earned {
		return MaxEarned
	}
	return earned + more
}

// Pay divides minted CC among the positions in proportion to the
// attribution each earned, or to the CC each has staked when none has
// earned any yet, exactly to the micro-CC by largest remainder
// (money.Apportion; equal remainders go to the position listed first, so
// the caller lists them in a stable order). It returns one part per
// position, in their order; a position with no weight gets 0.
func Pay(minted money.Micros, ps []Position) []money.Micros {
	weights := make([]*big.Int, len(ps))
	anyEarned := false
	for _, p := range ps {
		if p.Earned > 0 {
			anyEarned = true
			break
		}
	}
	for i, p := range ps {
		w := p.Amount
		if anyEarned {
			w = p.Earned
		}
		weights[i] = big.NewInt(int64(max(w, 0)))
	}
	parts := money.Apportion(int64(minted), weights)
	out := make([]money.Micros, len(parts))
	for i, n := range parts {
		out[i] = money.Micros(n)
	}
	return out
}

// GainPct is a position's realized gain as a percentage of the CC it has
// staked: realized / amount × 100, rounded to two decimals so the answer
// carries no float noise; 0 for a position with nothing staked.
func GainPct(realized, amount money.Micros) float64 {
	if amount <= 0 {
		return 0
	}
	return math.Round(float64(realized)/float64(amount)*10_000) / 100
}

// Project grounds a stage's projection (credit.Project) in the idea's
// history: once revenue has been paid, one CC staked now has already
// realized paid/staked, so the low multiplier is 1 plus that (the stake
// back and what it was paid, were nothing more to come) and the high one
// adds the stage's upside on top. Without revenue paid, or with nothing
// staked, the stage's projection stands; fromHistory says which it is.
func Project(p credit.Projection, paid, staked money.Micros) (out credit.Projection, fromHistory bool) {
	if paid <= 0 || staked <= 0 {
		return p, false
	}
	realized := float64(paid) / float64(staked)
	up := max(p.HighMultiplier-1, 0)
	p.LowMultiplier = round4(1 + realized)
	p.HighMultiplier = round4(1 + realized + up)
	return p, true
}

// round4 rounds to four decimals, as the stage projections are.
func round4(x float64) float64 { return math.Round(x*10_000) / 10_000 }

// Delivery is a signed usage delivery's body: a usage record of one idea.
type Delivery struct {
	IdeaID    string  `json:"idea_id"`
	Quantity  float64 `json:"quantity"`
	Unit      string  `json:"unit"`
	Evidence  string  `json:"evidence"`
	Reference string  `json:"reference"`
}

// MaxDelivery bounds a delivery's body: a usage record is a few hundred
// bytes, its evidence at most a couple of thousand.
const MaxDelivery = 16 << 10

// DecodeDelivery reads a delivery's body strictly: one JSON object of
// Delivery's fields, no other. The fields' own rules are the usage
// record's (the use case checks them).
func DecodeDelivery(body []byte) (Delivery, error) {
	var d Delivery
	if len(body) > MaxDelivery {
		return d, fault.Validation(fault.Field("body", "must be at most %d bytes", MaxDelivery))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Delivery{}, fault.Validation(fault.Field("body", "must be a JSON object {idea_id, quantity, unit, evidence, reference}: %v", err))
	}
	if dec.More() {
		return Delivery{}, fault.Validation(fault.Field("body", "must be one JSON object"))
	}
	return d, nil
}
