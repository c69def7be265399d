package credit

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// Account is one balance of the double-entry journal, named by what it
// is: its bucket, whose CC it holds and, for a stake, the idea. Those are
// carried explicitly from the movement that makes the account to the
// journal line and the database row, and nothing ever reads them back out
// of the account's name: ids may contain ':' (github:login, email:addr,
// contribution ids, idea ids), so "available:github:octo" could not be
// split back into its parts.
type Account struct {
	Bucket      string
	Contributor string
	Idea        string
}

// The buckets: a contributor's CC, and Issuance's.
const (
	BucketAvailable = "available"
	BucketStaked    = "staked"
	BucketCooling   = "cooling"
	BucketIssuance  = "issuance"
)

// Issuance is the account every minted CC is debited from and every burned
// CC is credited back to: -balance(Issuance) is total_cc_outstanding.
var Issuance = Account{Bucket: BucketIssuance}

// Available is the contributor's spendable CC.
func Available(contributor string) Account {
	return Account{Bucket: BucketAvailable, Contributor: contributor}
}

// Staked is the contributor's CC staked on an idea.
func Staked(contributor, idea string) Account {
	return Account{Bucket: BucketStaked, Contributor: contributor, Idea: idea}
}

// Cooling is the contributor's unstaked CC waiting out its cooldown.
func Cooling(contributor string) Account {
	return Account{Bucket: BucketCooling, Contributor: contributor}
}

// nameEscaper escapes a stake's contributor id inside its account name.
var nameEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// Name is the account's key in the journal: "issuance",
// "available:<contributor>", "cooling:<contributor>" and
// "staked:<contributor>:<idea>". Two accounts have the same name only when
// they are the same account: the bucket ends at the first ':', an
// available or cooling account's contributor is all the rest, and in a
// stake's name the contributor's '%' and ':' are escaped (%25, %3A), so
// the first ':' after it is the one before the idea. Only stakes escape,
// and only those two characters, so the accounts the ledger has written
// keep their names: a stake needs a registered contributor, whose id is a
// UUID.
func (a Account) Name() string {
	switch a.Bucket {
	case BucketIssuance:
		return BucketIssuance
	case BucketStaked:
		return BucketStaked + ":" + nameEscaper.Replace(a.Contributor) + ":" + a.Idea
	default:
		return a.Bucket + ":" + a.Contributor
	}
}

// String is the account's name, for messages.
func (a Account) String() string { return a.Name() }

// valid reports whether a is one of the accounts the constructors above
// make: a known bucket, a contributor exactly when the bucket is a
// contributor's, an idea exactly for a stake.
func (a Account) valid() bool {
	switch a.Bucket {
	case BucketIssuance:
		return a.Contributor == "" && a.Idea == ""
	case BucketStaked:
		return a.Contributor != "" && a.Idea != ""
	case BucketAvailable, BucketCooling:
		return a.Contributor != "" && a.Idea == ""
	}
	return false
}

// MayGoNegative reports whether the account's balance may be below zero:
// only Issuance; every contributor balance must stay at or above zero.
func (a Account) MayGoNegative() bool { return a == Issuance }

// Kind is what a journal entry records.
type Kind string

// The movement kinds.
const (
	KindDeposit  Kind = "deposit"
	KindWithdraw Kind = "withdraw"
	KindStake    Kind = "stake"
	KindUnstake  Kind = "unstake"
	KindRelease  Kind = "release"
	// KindDistribution pays one payout of a distribution as CC.
	KindDistribution Kind = "distribution"
	KindReversal     Kind = "reversal"
	// KindRevenue pays one position its part of a revenue record of the
	// idea it is staked on, minted against the USD the record brought.
	KindRevenue Kind = "revenue"
	// KindCorrection is a repair's: it restores the balances the audit
	// log recorded where the journal was edited to say otherwise.
	KindCorrection Kind = "correction"
)

// Movements are the kinds of journal entry: every audit entry of one of
// these kinds records a journal entry, and every journal entry is
// recorded by one.
var Movements = []Kind{KindDeposit, KindWithdraw, KindStake, KindUnstake, KindRelease, KindDistribution, KindReversal, KindCorrection,
	KindRevenue}

// IsMovement reports whether k is one of Movements.
func IsMovement(k Kind) bool { return slices.Contains(Movements, k) }

// Line is one side of an entry: a change to one account's balance.
type Line struct {
	Account Account
	Delta   money.Micros
}

// Entry is one CC movement: balanced lines, never updated or deleted (a
// correction is a reversing entry).
type Entry struct {
	Kind  Kind
	Lines []Line
}

// ErrUnbalanced reports an entry whose lines do not sum to zero.
var ErrUnbalanced = errors.New("journal entry does not balance")

// Validate checks the double-entry rules: at least two lines, none zero,
// each on a well-formed account, no account twice, and the lines sum to
// exactly zero.
func (e Entry) Validate() error {
	if e.Kind == "" {
		return errors.New("journal entry has no kind")
	}
	if len(e.Lines) < 2 {
		return fmt.Errorf("%s: journal entry needs at least two lines", e.Kind)
	}
	// The sum is taken in 128 bits (hi:lo): in 64, lines that wrap around
	// to zero would pass as balanced.
	var hi int64
	var lo uint64
	seen := make(map[Account]bool, len(e.Lines))
	for _, l := range e.Lines {
		if l.Delta == 0 || !l.Account.valid() {
			return fmt.Errorf("%s: journal line %q has no amount or no well-formed account", e.Kind, l.Account)
		}
		if seen[l.Account] {
			return fmt.Errorf("%s: account %q appears twice", e.Kind, l.Account)
		}
		seen[l.Account] = true
		var carry uint64
		lo, carry = bits.Add64(lo, uint64(l.Delta), 0)
		hi += int64(carry) + int64(l.Delta>>63)
	}
	if hi != 0 || lo != 0 {
		off := "more than an int64"
		if hi == int64(lo)>>63 {
			off = money.Micros(lo).String()
		}
		return fmt.Errorf("%s: %w (off by %s)", e.Kind, ErrUnbalanced, off)
	}
	return nil
}

// Transfer is the entry moving amount from one account to another.
func Transfer(kind Kind, from, to Account, amount money.Micros) Entry {
	return Entry{Kind: kind, Lines: []Line{{Account: from, Delta: -amount}, {Account: to, Delta: amount}}}
}
