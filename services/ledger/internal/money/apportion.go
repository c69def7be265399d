package money

import (
	"math/big"
	"slices"
)

// Apportion divides units whole units among shares in proportion to
// their weights, exactly, by largest remainder: each share first gets the
// whole units of its exact share (units × weight / total, a rational
// number computed with big integers); the units left over, fewer than the
// shares, go one each to the largest remainders, equal remainders to the
// share listed first. So the parts add up to units, every part is its
// exact share rounded down or up by less than one unit, and a larger
// weight is never given less than a smaller one. Rounding each share on
// its own instead would pay 99.99 of 100 split three ways.
//
// Weights must not be negative. With no weight above zero nothing is
// apportioned: every part is 0. units must not be negative.
func Apportion(units int64, weights []*big.Int) []int64 {
	parts := make([]int64, len(weights))
	total := new(big.Int)
	for _, w := range weights {
		total.Add(total, w)
	}
	if total.Sign() <= 0 || units <= 0 {
		return parts
	}
	// units × weight = whole × total + remainder, for each share; the
	// whole parts fall short of units by the remainders' sum over total,
	// which is less than the number of shares.
	n := big.NewInt(units)
	left := units
	remainders := make([]*big.Int, len(weights))
	num, whole := new(big.Int), new(big.Int)
	for i, w := range weights {
		num.Mul(n, w)
		remainders[i] = new(big.Int)
		whole.QuoRem(num, total, remainders[i])
		parts[i] = whole.Int64()
		left -= parts[i]
	}
	if left > 0 {
		order := make([]int, len(weights))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return remainders[b].Cmp(remainders[a]) })
		for _, i := range order[:left] {
			parts[i]++
		}
	}
	return parts
}
