package credit

import (
	"strings"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Limits of what a request to the credit economy may ask.
const (
	// MaxCC bounds one movement and an oracle reading: a billion CC.
	MaxCC = money.Micros(1_000_000_000) * money.Scale
	// MaxUSD bounds one deposit: a billion USD.
	MaxUSD = money.Micros(1_000_000_000) * money.Scale
	// MaxHours bounds one pledge: ten years of full-time work.
	MaxHours = money.Micros(100_000) * money.Scale
	// MaxText bounds references, reasons and signer ids.
	MaxText = 500
	// DefaultPage and MaxPage bound history, audit and incident pages.
	DefaultPage = 50
	MaxPage     = 500
	// DefaultPositionPage and MaxPositionPage bound a page of a
	// contributor's positions, one per idea it staked on. The spec answers
	// every position: the default holds them all for any contributor but
	// one staked on more ideas, whose answer stays bounded all the same.
	DefaultPositionPage = 500
	MaxPositionPage     = 1000
)

// Amount converts a request's amount (a JSON number) to exact micro-units:
// finite, more than zero, at most six decimals, at most limit. A refusal is
// a field error naming field.
func Amount(field string, x float64, limit money.Micros) (money.Micros, error) {
	m, err := money.FromFloat(x)
	switch {
	case err != nil:
		return 0, fault.Validation(fault.Field(field, "%s", err.Error()))
	case m <= 0:
		return 0, fault.Validation(fault.Field(field, "must be more than 0"))
	case m > limit:
		return 0, fault.Validation(fault.Field(field, "must be at most %d", limit/money.Scale))
	}
	return m, nil
}

// Text checks a short free-text field (a reference, a reason): when needed,
// not blank; never longer than MaxText bytes.
func Text(field, v string, needed bool) error {
	switch {
	case needed && strings.TrimSpace(v) == "":
		return fault.Validation(fault.Field(field, "is required"))
	case len(v) > MaxText:
		return fault.Validation(fault.Field(field, "must be at most %d bytes", MaxText))
	}
	return nil
}

// Page checks a page of the economy's lists (history, audit entries,
// incidents): an absent limit means DefaultPage, a given one must be
// 1..MaxPage; the offset must not be negative. Both field errors are
// reported together.
func Page(limit *int32, offset int32) (int, int, error) {
	return fault.Page(limit, offset, DefaultPage, MaxPage)
}

// PositionPage checks a page of a contributor's positions: an absent
// limit means DefaultPositionPage, a given one must be 1..MaxPositionPage;
// the offset must not be negative.
func PositionPage(limit *int32, offset int32) (int, int, error) {
	return fault.Page(limit, offset, DefaultPositionPage, MaxPositionPage)
}
