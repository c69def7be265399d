package audit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
)

func deposit() audit.Entry {
	return audit.Entry{Seq: 4, Kind: "deposit", At: t0, Actor: "admin", Subject: "ada", Amount: 995_000_000,
		Attrs: map[string]string{"entry_id": "e-1", "unit": "micro_cc", audit.LineAttr("available:ada"): "995000000",
			audit.LineAttr("issuance"): "-995000000", "reference": "wire-1"}}
}

func TestRecorded(t *testing.T) {
	t.Parallel()
	m := audit.Recorded(deposit())
	require.Equal(t, audit.Movement{EntryID: "e-1", Kind: "deposit", Contributor: "ada", Amount: 995_000_000,
		Lines: map[string]int64{"available:ada": 995_000_000, "issuance": -995_000_000}}, m)
	require.Empty(t, m.Differences(m), "a movement agrees with itself")

	bad := deposit()
	bad.Attrs[audit.LineAttr("issuance")] = "-0995000000"
	require.Equal(t, int64(0), audit.Recorded(bad).Lines["issuance"], "a line that is not canonical decimal is read as 0")
}

// TestDifferences: the minted deposit — 1 000 CC added to both
// lines and to the amount, consistently — differs from the log in each.
func TestDifferences(t *testing.T) {
	t.Parallel()
	logged := audit.Recorded(deposit())
	minted := audit.Recorded(deposit())
	minted.Amount += 1000_000_000
	minted.Lines = map[string]int64{"available:ada": 1995_000_000, "issuance": -1995_000_000}
	require.Equal(t, []string{
		"amount 1995000000 where the log records 995000000 micro-CC",
		"a line of 1995000000 on available:ada where the log records 995000000",
		"a line of -1995000000 on issuance where the log records -995000000",
	}, logged.Differences(minted))

	moved := audit.Recorded(deposit())
	moved.Contributor, moved.Kind, moved.Idea = "mallory", "withdraw", "i-1"
	moved.Lines = map[string]int64{"available:mallory": 995_000_000, "issuance": -995_000_000}
	require.Equal(t, []string{
		`kind "withdraw" where the log records "deposit"`,
		`contributor "mallory" where the log records "ada"`,
		`idea "i-1" where the log records ""`,
		"no line on available:ada where the log records 995000000",
		"a line of 995000000 on available:mallory that the log does not record",
	}, logged.Differences(moved))
}

func TestMovementDigest(t *testing.T) {
	t.Parallel()
	m := audit.Recorded(deposit())
	require.Equal(t, m.Digest(), audit.Recorded(deposit()).Digest())
	for _, edit := range []func(*audit.Movement){
		func(m *audit.Movement) { m.EntryID = "e-2" },
		func(m *audit.Movement) { m.Amount++ },
		func(m *audit.Movement) { m.Lines["issuance"]-- },
		func(m *audit.Movement) { m.Lines["cooling:ada"] = 1 },
		func(m *audit.Movement) { m.Contributor, m.Idea = "a", "da" },
	} {
		o := audit.Recorded(deposit())
		edit(&o)
		require.NotEqual(t, m.Digest(), o.Digest(), "%+v", o)
	}
	require.Equal(t, audit.Movement{}.Digest(), audit.Movement{Lines: map[string]int64{}}.Digest(), "no movement")
}
