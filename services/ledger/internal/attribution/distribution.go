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
	// Claimed is true for the cost of contributions that are claims
	// (StatusClaimed): no evidence or review backs them yet.
	Claimed bool
}

// Payout is one contributor's share of a distribution, in micro-units:
// a whole number of cents whenever the distributed value is one.
type Payout struct {
	ContributorID string
	Amount        money.Micros
	// Unpaid marks a payout a distribution paid in CC did not mint: its
	// payee never registered, so no session could move the CC.
	Unpaid bool
	// Claimed is the part of Amount that claims earned (Stake.Claimed):
	// Amount × claimed weight / weight, rounded down to the unit Amount
	// is counted in.
	Claimed money.Micros
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
// The payouts add up to value exactly, by largest remainder: value is
// counted in units — cents when it is a whole number of cents, else
// micro-units, the finest amount there is — and each contributor first
// gets the whole units of their exact share (a rational number, computed
// with big integers). The units left over, fewer than the contributors,
// go one each to the largest remainders, equal remainders in contributor
// id order. Rounding each share on its own instead would pay 99.99 of 100
// split three ways, and 0.02 of 0.01 split two ways. So every payout is
// its exact share rounded down or up by less than one unit, a larger
// weight is never paid less than a smaller one, and which of equal shares
// gets the odd cent depends on the ids alone.
//
// Each payout says which part of it claims earned (Payout.Claimed): a
// distribution paid in CC is given no claims at all (the caller leaves
// them out), one that is not weighs them and marks them.
//
// Every contributor with a stake gets an entry, a zero-weight one with 0
// (its remainder is zero, so it never gets a unit left over). Payouts are
// ordered by weight, largest first, then contributor id. The result is
// never nil.
func Split(value money.Micros, stakes []Stake) []Payout {
	weights, claimed := map[string]*big.Int{}, map[string]*big.Int{}
	for _, s := range stakes {
		w := weights[s.ContributorID]
		if w == nil {
			w, claimed[s.ContributorID] = new(big.Int), new(big.Int)
			weights[s.ContributorID] = w
		}
		term := big.NewInt(int64(s.Cost))
		term.Mul(term, big.NewInt(weightOffset+int64(s.Coherence)))
		w.Add(w, term)
		if s.Claimed {
			claimed[s.ContributorID].Add(claimed[s.ContributorID], term)
		}
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
		units  int64
	}
	shares := make([]share, 0, len(weights))
	for id, w := range weights {
		shares = append(shares, share{id: id, weight: w})
	}
	// Apportioned in contributor id order, so equal remainders go by id;
	// then listed largest weight first.
	slices.SortFunc(shares, func(a, b share) int { return cmp.Compare(a.id, b.id) })
	unit := money.Cent
	if value%money.Cent != 0 {
		unit = 1
	}
	ws := make([]*big.Int, len(shares))
	for i, s := range shares {
		ws[i] = s.weight
	}
	for i, n := range money.Apportion(int64(value/unit), ws) {
		shares[i].units = n
	}
	slices.SortStableFunc(shares, func(a, b share) int { return b.weight.Cmp(a.weight) })

	out := make([]Payout, len(shares))
	for i, s := range shares {
		out[i] = Payout{ContributorID: s.id, Amount: money.Micros(s.units) * unit}
		if c := claimed[s.id]; c.Sign() > 0 && s.weight.Sign() > 0 {
			part := new(big.Int).Mul(big.NewInt(s.units), c)
			part.Quo(part, s.weight)
			out[i].Claimed = money.Micros(part.Int64()) * unit
		}
	}
	return out
}
