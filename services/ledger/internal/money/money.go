// Package money holds the ledger's exact amounts: micro-units (millionths)
// in an int64, the way every amount is stored. The API speaks JSON numbers
// (doubles); this package is the one place where a double becomes an exact
// amount and back, so no float arithmetic ever touches a stored total.
package money

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Micros is an amount in millionths of a unit: 1.5 is 1_500_000.
type Micros int64

// Scale is the number of micro-units in one unit.
const Scale = 1_000_000

// Cent is one hundredth of a unit in micro-units.
const Cent Micros = Scale / 100

// Decimals is the finest precision an amount may carry.
const Decimals = 6

// maxParse bounds what FromFloat accepts so the result cannot overflow an
// int64; domains apply their own, much lower, limits on top.
const maxParse = 9e12

// Errors FromFloat reports; callers turn them into field errors.
var (
	ErrNotFinite     = errors.New("must be a finite number")
	ErrTooPrecise    = fmt.Errorf("must have at most %d decimal places", Decimals)
	ErrOutOfRange    = errors.New("is too large")
	errMalformedText = errors.New("is not a decimal number")
)

// FromFloat converts a JSON number to micro-units exactly. The double is
// read as its shortest decimal form (what strconv and JSON print, and what a
// client typed for any value with up to 15 significant digits), so 0.1 is
// exactly 100_000 and 0.30000000000000004 is refused as too precise instead
// of being silently rounded.
func FromFloat(x float64) (Micros, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, ErrNotFinite
	}
	if math.Abs(x) > maxParse {
		return 0, ErrOutOfRange
	}
	return parseDecimal(strconv.FormatFloat(x, 'f', -1, 64))
}

// parseDecimal reads "[-]digits[.digits]" into micro-units.
func parseDecimal(s string) (Micros, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > Decimals {
		return 0, ErrTooPrecise
	}
	if whole == "" || !allDigits(whole) || !allDigits(frac) {
		return 0, errMalformedText
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/Scale-1 {
		return 0, ErrOutOfRange
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", Decimals-len(frac)), 10, 64)
	}
	m := Micros(w*Scale + f)
	if neg {
		m = -m
	}
	return m, nil
}

func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Float64 is the amount as a JSON number. For amounts below 2^53 micro-units
// (about 9 billion units, above every limit the ledger allows) the result is
// the double nearest the exact decimal, so it prints as that decimal.
func (m Micros) Float64() float64 { return float64(m) / Scale }

// String prints the amount with six decimals, for logs and messages.
func (m Micros) String() string {
	sign := ""
	v := uint64(m) // the magnitude, unsigned: -m does not exist for the least int64
	if m < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%06d", sign, v/Scale, v%Scale)
}
