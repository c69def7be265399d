package credit

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// Account names one balance of the double-entry journal. Contributor
// accounts are "<bucket>:<contributor id>" (and ":<idea id>" for a stake);
// Issuance is where CC comes from and goes back to, so its balance is minus
// the CC outstanding and every entry's lines sum to zero.
type Account string

// Issuance is the account every minted CC is debited from and every burned
// CC is credited back to: -balance(Issuance) is total_cc_outstanding.
const Issuance Account = "issuance"

// The buckets of a contributor's CC.
const (
	BucketAvailable = "available"
	BucketStaked    = "staked"
	BucketCooling   = "cooling"
)

// Available is the contributor's spendable CC.
func Available(contributor string) Account { return Account(BucketAvailable + ":" + contributor) }

// Staked is the contributor's CC staked on an idea.
func Staked(contributor, idea string) Account {
	return Account(BucketStaked + ":" + contributor + ":" + idea)
}

// Cooling is the contributor's unstaked CC waiting out its cooldown.
func Cooling(contributor string) Account { return Account(BucketCooling + ":" + contributor) }

// Parse splits an account into its bucket, contributor and idea ("" when
// the bucket has none). Ids never contain ':' (contributor ids are UUIDs or
// handles, idea ids UUIDs or [a-z0-9_-] slugs); Parse is for reports and
// tests, not for trust decisions.
func (a Account) Parse() (bucket, contributor, idea string) {
	parts := strings.SplitN(string(a), ":", 3)
	bucket = parts[0]
	if len(parts) > 1 {
		contributor = parts[1]
	}
	if len(parts) > 2 {
		idea = parts[2]
	}
	return bucket, contributor, idea
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
)

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
// no account twice, and the lines sum to exactly zero.
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
		if l.Delta == 0 || l.Account == "" {
			return fmt.Errorf("%s: journal line %q has no amount or account", e.Kind, l.Account)
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

// Reverse is the entry that undoes e.
func Reverse(e Entry) Entry {
	out := Entry{Kind: KindReversal, Lines: make([]Line, len(e.Lines))}
	for i, l := range e.Lines {
		out.Lines[i] = Line{Account: l.Account, Delta: -l.Delta}
	}
	return out
}
