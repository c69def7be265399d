// Package attribution holds the value-attribution rules: what an asset and a
// contribution may be, the coherence score, the cost estimate of a code
// change, and how a distribution splits value among contributors. No SQL, no
// proto: the handler and the store translate.
package attribution

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Asset types, spelled as the contract names them.
const (
	TypeCode    = "CODE"
	TypeModel   = "MODEL"
	TypeContent = "CONTENT"
	TypeData    = "DATA"
)

// Types lists the asset types in the contract's order.
var Types = []string{TypeCode, TypeModel, TypeContent, TypeData}

// Contribution sources.
const (
	SourceAPI    = "api"
	SourceGitHub = "github"
)

// Contribution statuses: a contribution is a claim until evidence or an
// operator's review backs it, and only backed ones are paid in CC.
const (
	// StatusClaimed: recorded through the API by a contributor, or from
	// an unsigned GitHub delivery; nobody vouched for it yet.
	StatusClaimed = "claimed"
	// StatusAccepted: recorded by an operator, or a claim an operator
	// reviewed and accepted.
	StatusAccepted = "accepted"
	// StatusRejected: a claim an operator rejected; it weighs nothing.
	StatusRejected = "rejected"
	// StatusVerified: from a signed GitHub delivery, whose evidence is
	// the delivery itself.
	StatusVerified = "verified"
)

// Verdicts of a review.
const (
	VerdictAccept = "accept"
	VerdictReject = "reject"
)

// Trust levels of contributors the ledger creates itself (registration
// creates "tofu" ones).
const (
	// TrustImplicit marks a contributor first named by a contribution.
	TrustImplicit = "implicit"
	// TrustGitHub marks a contributor first seen in a GitHub delivery,
	// keyed on the GitHub login GitHub authenticated.
	TrustGitHub = "github"
)

// Limits on amounts.
const (
	// MaxAmount bounds one cost_amount or value_amount: a billion units.
	MaxAmount money.Micros = 1_000_000_000 * money.Scale
	// MaxAssetTotal bounds an asset's total_cost. It stays below 2^53
	// micro-units, so the total is exact also as a JSON number.
	MaxAssetTotal money.Micros = 9_000_000_000 * money.Scale
)

// Limits on text, metadata and pages.
const (
	MaxNameLen          = 200
	MaxDescriptionLen   = 10_000
	MaxContributorIDLen = 256
	// MaxMetadataBytes bounds a contribution's metadata, as JSON. With
	// MaxContributionPage it keeps a page of contributions well inside one
	// 4 MiB gRPC message.
	MaxMetadataBytes = 4 << 10
	// DefaultLimit and MaxLimit bound asset list pages.
	DefaultLimit = 50
	MaxLimit     = 500
	// MaxContributionPage is both the default and the largest page of a
	// contribution list: "all contributions" for all but the busiest
	// assets, in one response.
	MaxContributionPage = 500
	// DefaultPayoutPage and MaxPayoutPage bound the payouts one
	// distribution response carries (GET /api/distributions/{id}; the
	// create answers with the first DefaultPayoutPage): a distribution has
	// one payout per contributor to the asset, so without a page a busy
	// asset's would outgrow a 4 MiB gRPC message.
	DefaultPayoutPage = 100
	MaxPayoutPage     = 1000
	// DefaultDistributionPage and MaxDistributionPage bound a page of an
	// asset's distributions, each carrying its first ListedPayouts payouts:
	// at most 1 000 payouts in one list response.
	DefaultDistributionPage = 20
	MaxDistributionPage     = 100
	ListedPayouts           = 10
)

// ValidateAsset checks a create request's fields.
func ValidateAsset(typ, name, description string) error {
	var errs []fault.FieldError
	if !slices.Contains(Types, typ) {
		errs = append(errs, fault.Field("type", "must be one of %s", strings.Join(Types, ", ")))
	}
	errs = append(errs, checkText("name", name, MaxNameLen)...)
	errs = append(errs, checkText("description", description, MaxDescriptionLen)...)
	if len(errs) > 0 {
		return fault.Validation(errs...)
	}
	return nil
}

func checkText(field, s string, maxLen int) []fault.FieldError {
	switch {
	case !utf8.ValidString(s):
		return []fault.FieldError{fault.Field(field, "must be valid UTF-8")}
	case utf8.RuneCountInString(s) > maxLen:
		return []fault.FieldError{fault.Field(field, "must be at most %d characters", maxLen)}
	}
	return nil
}

// ValidateContributorID checks a contributor id named by a contribution:
// any non-empty string of at most MaxContributorIDLen characters without
// control characters (an id is shown in lists and logs) and not only spaces.
func ValidateContributorID(id string) error {
	msg := ""
	switch {
	case strings.TrimSpace(id) == "":
		msg = "is required"
	case !utf8.ValidString(id):
		msg = "must be valid UTF-8"
	case utf8.RuneCountInString(id) > MaxContributorIDLen:
		msg = fmt.Sprintf("must be at most %d characters", MaxContributorIDLen)
	case strings.ContainsFunc(id, unicode.IsControl):
		msg = "must not contain control characters"
	}
	if msg != "" {
		return fault.Validation(fault.Field("contributor_id", "%s", msg))
	}
	return nil
}

// CheckMetadata checks a contribution's metadata can be stored: at most
// MaxMetadataBytes of JSON. (Values JSON cannot hold, NaN and infinities,
// are refused too, though protobuf's Struct already turns them into
// strings.)
func CheckMetadata(metadata map[string]any) error {
	b, err := json.Marshal(metadata)
	switch {
	case err != nil:
		return fault.Validation(fault.Field("metadata", "must be plain JSON (no NaN or infinite numbers)"))
	case len(b) > MaxMetadataBytes:
		return fault.Validation(fault.Field("metadata", "must be at most %d bytes of JSON", MaxMetadataBytes))
	}
	return nil
}

// Amount converts a request amount (cost_amount, value_amount) to exact
// micro-units: finite, not negative, at most six decimals, at most MaxAmount.
func Amount(field string, x float64) (money.Micros, error) {
	m, err := money.FromFloat(x)
	switch {
	case err != nil:
		return 0, fault.Validation(fault.Field(field, "%s", err.Error()))
	case m < 0:
		return 0, fault.Validation(fault.Field(field, "must not be negative"))
	case m > MaxAmount:
		return 0, fault.Validation(fault.Field(field, "must be at most %d", MaxAmount/money.Scale))
	}
	return m, nil
}

// PageLimit validates an asset list page: an absent limit means
// DefaultLimit, a given one must be 1..MaxLimit; the offset must not be
// negative.
func PageLimit(limit *int32, offset int32) (int, int, error) {
	return Page(limit, offset, DefaultLimit, MaxLimit)
}

// ContributionPage validates a contribution list page: an absent limit
// means MaxContributionPage, a given one must be 1..MaxContributionPage; the
// offset must not be negative.
func ContributionPage(limit *int32, offset int32) (int, int, error) {
	return Page(limit, offset, MaxContributionPage, MaxContributionPage)
}

// PayoutPage validates a page of a distribution's payouts: an absent limit
// means DefaultPayoutPage, a given one must be 1..MaxPayoutPage; the offset
// must not be negative.
func PayoutPage(limit *int32, offset int32) (int, int, error) {
	return Page(limit, offset, DefaultPayoutPage, MaxPayoutPage)
}

// DistributionPage validates a page of an asset's distributions: an absent
// limit means DefaultDistributionPage, a given one must be
// 1..MaxDistributionPage; the offset must not be negative.
func DistributionPage(limit *int32, offset int32) (int, int, error) {
	return Page(limit, offset, DefaultDistributionPage, MaxDistributionPage)
}

// Page validates a page of any ledger list (fault.Page): an absent limit
// means def, a given one must be 1..maxLimit; the offset must not be
// negative. Both field errors are reported together.
func Page(limit *int32, offset, def, maxLimit int32) (int, int, error) {
	return fault.Page(limit, offset, int(def), int(maxLimit))
}
