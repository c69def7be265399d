package credit_test

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

const cc = money.Scale

func TestNewQuoteSplitsTheSpreadEvenly(t *testing.T) {
	t.Parallel()
	q, err := credit.NewQuote(100*cc, credit.DefaultSpreadBP)
	require.NoError(t, err)
	require.Equal(t, money.Micros(99_500_000), q.Buy, "buy = mid less 0.5%")
	require.Equal(t, money.Micros(100*cc), q.Mid)
	require.Equal(t, money.Micros(100_500_000), q.Sell, "sell = mid plus 0.5%")
	require.InDelta(t, 1.0, q.SpreadPct(), 1e-12)
	require.InDelta(t, 0.01, q.USDPerCC(), 1e-12)
}

func TestNewQuoteRefusesBadRates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mid    money.Micros
		spread int64
	}{{0, 100}, {-1, 100}, {cc, 0}, {cc, 10_000}, {cc, -5}, {1, 100}} {
		_, err := credit.NewQuote(c.mid, c.spread)
		require.ErrorIs(t, err, credit.ErrBadRate, "mid %d spread %d", c.mid, c.spread)
	}
}

func TestMintAndBurnWorkedExample(t *testing.T) {
	t.Parallel()
	q, err := credit.NewQuote(100*cc, credit.DefaultSpreadBP) // 100 CC per USD
	require.NoError(t, err)
	minted, fee, err := q.Mint(10 * cc) // 10 USD
	require.NoError(t, err)
	require.Equal(t, money.Micros(995*cc), minted, "10 USD at 99.5 CC/USD")
	require.Equal(t, money.Micros(50_000), fee, "0.05 USD kept as spread")

	usd, fee, err := q.Burn(1005 * cc)
	require.NoError(t, err)
	require.Equal(t, money.Micros(10*cc), usd, "1005 CC at 100.5 CC/USD")
	require.Equal(t, money.Micros(50_000), fee, "0.05 USD kept as spread")

	_, _, err = q.Mint(0)
	require.Error(t, err)
	_, _, err = q.Burn(-1)
	require.Error(t, err)
}

func TestBackedAndReserveRatio(t *testing.T) {
	t.Parallel()
	mid := money.Micros(100 * cc)
	require.True(t, credit.Backed(0, 0, mid), "nothing outstanding is always backed")
	require.True(t, credit.Backed(1000*cc, 10*cc, mid), "exactly at the limit")
	require.False(t, credit.Backed(1000*cc+1, 10*cc, mid), "one micro-CC over")
	require.False(t, credit.Backed(1, 0, mid))
	require.InDelta(t, 1.0, credit.ReserveRatio(0, 0, mid), 0)
	require.InDelta(t, 1.0, credit.ReserveRatio(1000*cc, 10*cc, mid), 1e-9)
	require.InDelta(t, 2.0, credit.ReserveRatio(500*cc, 10*cc, mid), 1e-9)
	require.InDelta(t, 0.5, credit.ReserveRatio(2000*cc, 10*cc, mid), 1e-9)
}

// TestRaisesRatio: exact, whatever the rate; a movement that keeps the
// ratio does not raise it.
func TestRaisesRatio(t *testing.T) {
	t.Parallel()
	mid := money.Micros(100 * cc)
	// 1 000 CC against 8.54 USD at 100 CC per USD: 0.854.
	o, tr := money.Micros(1000*cc), money.Micros(8_540_000)
	require.True(t, credit.RaisesRatio(o, tr, o+99_500_000, tr+cc, mid), "a 1 USD deposit at the buy rate (99.5 CC) raises 0.854")
	require.False(t, credit.RaisesRatio(o, tr, o+100*cc, tr+854_000, mid), "the same ratio is no raise")
	require.False(t, credit.RaisesRatio(o, tr, o-10*cc, tr-cc, mid), "a withdrawal that pays more than its share lowers it")
	require.True(t, credit.RaisesRatio(o, tr, o-10*cc, tr-10_000, mid), "one that pays less raises it")
	require.False(t, credit.RaisesRatio(o, tr, 0, 0, mid), "nothing left outstanding has the ratio 1.0 by definition: no raise here")
	require.True(t, credit.RaisesRatio(0, 0, 99_500_000, cc, mid), "from nothing outstanding, backed above 1.0")
	require.False(t, credit.RaisesRatio(0, 0, 100*cc, cc, mid), "exactly 1.0 is no raise")
}

// TestSpreadProperties: for any rate, spread and amount, buy < mid < sell,
// a deposit never mints more than the deposit is worth at mid, a withdrawal
// never pays more than the CC is worth at mid, fees are never negative, and
// a deposit followed by the withdrawal of everything it minted keeps the
// treasury whole (backing preserved).
func TestSpreadProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		mid := money.Micros(rapid.Int64Range(1000, 1_000_000*cc).Draw(t, "mid"))
		spread := rapid.Int64Range(1, 5000).Draw(t, "spread_bp")
		usd := money.Micros(rapid.Int64Range(1, 1_000_000*cc).Draw(t, "usd"))
		q, err := credit.NewQuote(mid, spread)
		if err != nil {
			t.Fatalf("quote: %v", err)
		}
		if !(q.Buy < q.Mid && q.Mid < q.Sell) {
			t.Fatalf("want buy < mid < sell, got %s", q)
		}
		minted, fee, err := q.Mint(usd)
		if err != nil {
			return // out of range for this rate: refused, not wrapped
		}
		if fee < 0 {
			t.Fatalf("mint fee %s < 0", fee)
		}
		// minted * Scale <= usd * mid, exactly.
		lhs := new(big.Int).Mul(big.NewInt(int64(minted)), big.NewInt(money.Scale))
		rhs := new(big.Int).Mul(big.NewInt(int64(usd)), big.NewInt(int64(mid)))
		if lhs.Cmp(rhs) > 0 {
			t.Fatalf("minted %s for %s USD at mid %s: more than it is worth", minted, usd, mid)
		}
		if !credit.Backed(minted, usd, mid) {
			t.Fatalf("a single deposit must leave the supply backed")
		}
		if minted == 0 {
			return
		}
		paid, bfee, err := q.Burn(minted)
		if err != nil {
			t.Fatalf("burn what was minted: %v", err)
		}
		if bfee < 0 || paid > usd {
			t.Fatalf("burning %s minted from %s USD paid %s (fee %s)", minted, usd, paid, bfee)
		}
	})
}

func TestCooldownTiers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		amount money.Micros
		want   time.Duration
	}{
		{1, 0}, {100*cc - 1, 0}, {100 * cc, 24 * time.Hour}, {500 * cc, 24 * time.Hour},
		{1000 * cc, 24 * time.Hour}, {1000*cc + 1, 72 * time.Hour}, {1_000_000 * cc, 72 * time.Hour},
	} {
		require.Equal(t, c.want, credit.Cooldown(c.amount), "amount %s", c.amount)
	}
}

// TestCooldownIsMonotonic: a larger unstake never cools for less time, and
// only the three documented durations occur.
func TestCooldownIsMonotonic(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		a := money.Micros(rapid.Int64Range(1, 10_000*cc).Draw(t, "a"))
		b := money.Micros(rapid.Int64Range(1, 10_000*cc).Draw(t, "b"))
		if a > b {
			a, b = b, a
		}
		ca, cb := credit.Cooldown(a), credit.Cooldown(b)
		if ca > cb {
			t.Fatalf("cooldown(%s)=%s > cooldown(%s)=%s", a, ca, b, cb)
		}
		switch ca {
		case 0, credit.ShortCooldown, credit.LongCooldown:
		default:
			t.Fatalf("unexpected cooldown %s", ca)
		}
	})
}

// TestUnstakeCooldownCountsTheWindow: the tier is that of everything
// unstaked from the idea in the window, this unstake included, so
// splitting an exit changes nothing: 21 unstakes of 99.999999 CC cool like
// one of 2 099.999979 CC once the total passes the thresholds.
func TestUnstakeCooldownCountsTheWindow(t *testing.T) {
	t.Parallel()
	require.Equal(t, credit.LongCooldown, credit.UnstakeCooldown(0, 2000*cc), "2 000 CC at once")
	var (
		earlier money.Micros
		got     []time.Duration
	)
	for range 21 {
		got = append(got, credit.UnstakeCooldown(earlier, 99_999_999))
		earlier += 99_999_999
	}
	require.Equal(t, time.Duration(0), got[0], "the first is below 100 CC")
	for i := 1; i <= 9; i++ {
		require.Equal(t, credit.ShortCooldown, got[i], "unstake %d: %s CC in the window", i+1, money.Micros(99_999_999*(i+1)))
	}
	for i := 10; i < 21; i++ {
		require.Equal(t, credit.LongCooldown, got[i], "unstake %d: more than 1 000 CC in the window", i+1)
	}
	require.Equal(t, credit.LongCooldown, credit.UnstakeCooldown(math.MaxInt64, math.MaxInt64), "a total past int64 saturates")
	rapid.Check(t, func(t *rapid.T) {
		earlier := money.Micros(rapid.Int64Range(0, 10_000*cc).Draw(t, "earlier"))
		a := money.Micros(rapid.Int64Range(1, 10_000*cc).Draw(t, "a"))
		b := money.Micros(rapid.Int64Range(int64(a), 10_000*cc).Draw(t, "b"))
		if credit.UnstakeCooldown(earlier, a) > credit.UnstakeCooldown(earlier, b) {
			t.Fatalf("a larger unstake cooled for less")
		}
		if credit.UnstakeCooldown(earlier, a) < credit.Cooldown(a) {
			t.Fatalf("earlier unstakes shortened the cooldown")
		}
		if credit.UnstakeCooldown(earlier, a) != credit.Cooldown(earlier+a) {
			t.Fatalf("not the tier of the window's total")
		}
	})
}

func TestNextSupplyIsChecked(t *testing.T) {
	t.Parallel()
	o, tr, err := credit.NextSupply(10*cc, 5*cc, 3*cc, 1*cc, -2*cc)
	require.NoError(t, err)
	require.Equal(t, money.Micros(12*cc), o)
	require.Equal(t, money.Micros(3*cc), tr)

	// The int64 sum used to wrap around to a negative supply, which read
	// as a backing failure.
	for _, c := range []struct{ outstanding, treasury, mint, burn, usd money.Micros }{
		{math.MaxInt64 - 5, 0, 6, 0, 0},
		{0, math.MaxInt64, 0, 0, 1},
		{math.MinInt64 + 1, 0, 0, 2, 0},
		{0, math.MinInt64, 0, 0, -1},
		{0, 0, 0, math.MinInt64, 0},
	} {
		o, tr, err := credit.NextSupply(c.outstanding, c.treasury, c.mint, c.burn, c.usd)
		require.ErrorIs(t, err, credit.ErrSupplyLimit, "%+v", c)
		require.Equal(t, c.outstanding, o, "unchanged")
		require.Equal(t, c.treasury, tr, "unchanged")
	}
	o, _, err = credit.NextSupply(math.MaxInt64-5, 0, 5, 0, 0)
	require.NoError(t, err)
	require.Equal(t, money.Micros(math.MaxInt64), o, "up to the limit exactly")
	rapid.Check(t, func(t *rapid.T) {
		v := func(name string) money.Micros { return money.Micros(rapid.Int64().Draw(t, name)) }
		outstanding, treasury, mint, burn, usd := v("outstanding"), v("treasury"), v("mint"), v("burn"), v("usd")
		o, tr, err := credit.NextSupply(outstanding, treasury, mint, burn, usd)
		wantO := new(big.Int).Add(big.NewInt(int64(outstanding)), big.NewInt(int64(mint)))
		wantO.Sub(wantO, big.NewInt(int64(burn)))
		wantT := new(big.Int).Add(big.NewInt(int64(treasury)), big.NewInt(int64(usd)))
		// mint is added before burn is taken away: a sum that passes the
		// limit on the way is refused even if the burn would bring it back.
		mid := new(big.Int).Add(big.NewInt(int64(outstanding)), big.NewInt(int64(mint)))
		fits := wantO.IsInt64() && wantT.IsInt64() && mid.IsInt64()
		if fits != (err == nil) {
			t.Fatalf("NextSupply(%d, %d, %d, %d, %d): err %v, exact fits %v", outstanding, treasury, mint, burn, usd, err, fits)
		}
		if err == nil && (int64(o) != wantO.Int64() || int64(tr) != wantT.Int64()) {
			t.Fatalf("NextSupply(%d, %d, %d, %d, %d) = %d, %d", outstanding, treasury, mint, burn, usd, o, tr)
		}
	})
}

func TestEntryValidate(t *testing.T) {
	t.Parallel()
	ok := credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), 5*cc)
	require.NoError(t, ok.Validate())

	a, b := credit.Available("ada"), credit.Cooling("ada")
	bad := []credit.Entry{
		{Kind: credit.KindStake},
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: a, Delta: 1}}},
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: a, Delta: 1}, {Account: b, Delta: -2}}},
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: a, Delta: 1}, {Account: a, Delta: -1}}},
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: a, Delta: 0}, {Account: b, Delta: 0}}},
		{Lines: []credit.Line{{Account: a, Delta: 1}, {Account: b, Delta: -1}}},
		// Accounts the constructors never make: no bucket, no contributor,
		// a stake without its idea, an idea on an available account.
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: credit.Account{}, Delta: 1}, {Account: b, Delta: -1}}},
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: credit.Available(""), Delta: 1}, {Account: b, Delta: -1}}},
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: credit.Staked("ada", ""), Delta: 1}, {Account: b, Delta: -1}}},
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: credit.Account{Bucket: credit.BucketAvailable, Contributor: "ada", Idea: "i"}, Delta: 1}, {Account: b, Delta: -1}}},
		{Kind: credit.KindStake, Lines: []credit.Line{{Account: credit.Account{Bucket: "other", Contributor: "ada"}, Delta: 1}, {Account: b, Delta: -1}}},
	}
	for i, e := range bad {
		require.Error(t, e.Validate(), "entry %d", i)
	}
}

func TestAccountNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		account credit.Account
		name    string
	}{
		{credit.Issuance, "issuance"},
		{credit.Available("ada"), "available:ada"},
		{credit.Cooling("ada"), "cooling:ada"},
		{credit.Staked("ada", "idea-1"), "staked:ada:idea-1"},
		// Ids with ':' keep their parts: the name is never split again.
		{credit.Available("github:octo"), "available:github:octo"},
		{credit.Available("bob:ghost"), "available:bob:ghost"},
		{credit.Staked("ada", "x:y"), "staked:ada:x:y"},
		{credit.Staked("github:octo", "x"), "staked:github%3Aocto:x"},
		{credit.Staked("100%", "x"), "staked:100%25:x"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.name, tt.account.Name(), "%+v", tt.account)
		require.Equal(t, tt.name, tt.account.String())
	}
	require.NotEqual(t, credit.Staked("github:octo", "x").Name(), credit.Staked("github", "octo:x").Name(),
		"the two ways to split one old name are two accounts")
	require.Equal(t, credit.Account{Bucket: credit.BucketAvailable, Contributor: "bob:ghost"}, credit.Available("bob:ghost"))
	require.True(t, credit.Issuance.MayGoNegative())
	require.False(t, credit.Cooling("ada").MayGoNegative())
}

func TestPledgeValue(t *testing.T) {
	t.Parallel()
	v, err := credit.PledgeValue(2_500_000, credit.DefaultPledgeRate) // 2.5 h
	require.NoError(t, err)
	require.Equal(t, money.Micros(1250*cc), v)
}

func TestProject(t *testing.T) {
	t.Parallel()
	p := credit.Project("none", 0.5)
	require.Equal(t, credit.Projection{LowMultiplier: 0.5, HighMultiplier: 3.0, StageUnlockPct: 0}, p)
	p = credit.Project("testing", 1.0)
	require.InDelta(t, 2.6, p.HighMultiplier, 1e-9, "upside 0.8 doubled by full coherence")
	require.Equal(t, 60.0, p.StageUnlockPct, "a percentage, as its name says: 60 % at testing")
	p = credit.Project("complete", 0)
	require.InDelta(t, 1.0, p.HighMultiplier, 1e-9, "no coherence: no upside, never below low")
	require.Equal(t, credit.Project("none", 0.5), credit.Project("bogus", 0.5))
}

// TestCheckStakeOn: a pending idea takes stakes from its creator alone;
// an accepted one from anyone.
func TestCheckStakeOn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name            string
		pending         bool
		creator, staker string
		refused         bool
	}{
		{"accepted, anyone", false, "ada", "bob", false},
		{"accepted, an operator's idea", false, "", "bob", false},
		{"pending, its creator", true, "ada", "ada", false},
		{"pending, another contributor", true, "ada", "bob", true},
		{"pending, no creator (an operator held it back)", true, "", "bob", true},
		{"pending, no creator, no staker", true, "", "", true},
	} {
		err := credit.CheckStakeOn("kettle", tt.pending, tt.creator, tt.staker)
		if !tt.refused {
			require.NoError(t, err, tt.name)
			continue
		}
		require.Equal(t, fault.Conflict, fault.KindOf(err), tt.name)
		require.EqualError(t, err, "conflict: idea kettle waits for an operator to accept its name and values: until then only its creator may stake on it", tt.name)
	}
}
