package attribution

import (
	"cmp"
	"math/big"
	"slices"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// Stake is what one contributor put into an asset at one coherence score:
// the sum of the cost of those contributions. A contributor may have several
// stakes (one per coherence score); the store aggregates, this package
// weighs.
type Stake struct {
	ContributorID string
	Cost          money.Micros
	Coherence     Coherence
}

// Payout is one contributor's share of a distribution, in micro-units that
// are always a whole number of cents.
type Payout struct {
	ContributorID string
	Amount        money.Micros
}

// weightOffset is the 0.5 of weight = cost × (0.5 + coherence), in
// Coherence's thousandths.
const weightOffset = 500

// Split divides value among the contributors of stakes by the four rules:
//
//  1. a contributor's weight is the sum over their contributions of
//     cost × (0.5 + coherence);
//  2. each payout is value × weight / total weight;
//  3. no contributions: no payouts;
//  4. total weight zero: no payouts.
//
// Each payout is its exact share (a rational number, computed with big
// integers) rounded half-up to the cent on its own. The payouts therefore
// need not add up to value exactly: each may differ from its exact share by
// at most half a cent, and nothing is moved from one payout to another to
// hide that. Every contributor with a stake gets an entry, a zero-weight one
// with 0.00. Payouts are ordered by weight, largest first, then contributor
// id. The result is never nil.
func Split(value money.Micros, stakes []Stake) []Payout {
	weights := map[string]*big.Int{}
	for _, s := range stakes {
		w := weights[s.ContributorID]
		if w == nil {
			w = new(big.Int)
			weights[s.ContributorID] = w
		}
		term := big.NewInt(int64(s.Cost))
		term.Mul(term, big.NewInt(weightOffset+int64(s.Coherence)))
		w.Add(w, term)
	}
	total := new(big.Int)
	for _, w := range weights {
		total.Add(total, w)
	}
	if total.Sign() <= 0 {
		return []Payout{}
	}

	type share struct {
		id     string
		weight *big.Int
	}
	shares := make([]share, 0, len(weights))
	for id, w := range weights {
		shares = append(shares, share{id, w})
	}
	slices.SortFunc(shares, func(a, b share) int {
		if c := b.weight.Cmp(a.weight); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})

	// cents = value × weight / (total × cent), rounded half-up:
	// floor((2 × num + den) / (2 × den)).
	den := new(big.Int).Mul(total, big.NewInt(int64(money.Cent)))
	den2 := new(big.Int).Lsh(den, 1)
	v := big.NewInt(int64(value))
	out := make([]Payout, 0, len(shares))
	num := new(big.Int)
	for _, s := range shares {
		num.Mul(v, s.weight)
		num.Lsh(num, 1)
		num.Add(num, den)
		num.Quo(num, den2)
		out = append(out, Payout{ContributorID: s.id, Amount: money.Micros(num.Int64()) * money.Cent})
	}
	return out
}
