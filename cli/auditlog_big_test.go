package cli

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/platform/auditlog"
	"github.com/foundryhq/foundry/services/platform/auditlog/auditlogtest"
)

// TestVerifyLogPastTwoToThe31: foundry audit verify follows a log from a
// checkpoint below 2^31 records to one past it and checks an entry at
// seq 2^31+3, from the server's JSON (numbers past 2^31) to the proofs.
// The log is a sparse tree: every record the genesis record but that
// entry's.
func TestVerifyLogPastTwoToThe31(t *testing.T) {
	t.Parallel()
	const size, seq, old = 1<<31 + 5, 1<<31 + 3, 1<<31 - 3
	skey, vkey := genKey(t, "foundry-audit")
	e := auditlog.Entry{Seq: seq, Kind: "deposit", At: t0, Actor: "admin", Subject: "ada", Amount: 1_500_000,
		Attrs: map[string]string{"unit": "micro_cc"}}
	leaf := auditlog.Leaf(e)
	tree := auditlogtest.NewSparseTree(size, auditlog.LeafHash(auditlog.GenesisRecord), map[int64]tlog.Hash{seq: leaf})
	root, err := tree.Root(size)
	require.NoError(t, err)
	oldRoot, err := tree.Root(old)
	require.NoError(t, err)
	signed := func(n int64, r tlog.Hash) string {
		s, err := note.NewSigner(skey)
		require.NoError(t, err)
		msg, err := note.Sign(&note.Note{Text: s.Name() + "\n" + strconv.FormatInt(n, 10) + "\n" + b64(r) + "\n"}, s)
		require.NoError(t, err)
		return string(msg)
	}
	held := auditState{Server: "http://ledger.test", VerifierKey: vkey, KeyTrustedAt: t0, path: "/state/ledger.json",
		Checkpoint: &heldCheckpoint{Note: signed(old, oldRoot), TreeSize: old, RootHash: b64(oldRoot), VerifiedAt: t0}}

	tp, err := tlog.ProveTree(size, old, tree)
	require.NoError(t, err)
	rp, err := tlog.ProveRecord(size, seq, tree)
	require.NoError(t, err)
	// The answers as the gateway writes them: 64-bit numbers, not strings.
	consistency, proof := &ledgerv1.GetAuditConsistencyResponse{}, &ledgerv1.GetAuditProofResponse{}
	require.NoError(t, unmarshalOptions.Unmarshal([]byte(`{"from": 2147483645, "to": 2147483653, "old_root": "`+b64(oldRoot)+
		`", "new_root": "`+b64(root)+`", "proof": `+jsonStrings(b64s(tp))+`}`), consistency))
	require.NoError(t, unmarshalOptions.Unmarshal([]byte(`{"seq": 2147483651, "tree_size": 2147483653, "leaf_hash": "`+b64(leaf)+
		`", "proof": `+jsonStrings(b64s(rp))+`}`), proof))
	proof.Entry = shownEntry(e, [32]byte{})

	ev := logEvidence{ServedKey: vkey + "\n", Note: signed(size, root), Consistency: consistency,
		Entries: []entryEvidence{{Seq: seq, Proof: proof}}}
	rep, next, err := verifyLog(ev, held, t1)
	require.NoError(t, err)
	require.True(t, rep.Valid)
	require.Equal(t, int64(size), *rep.TreeSize)
	require.Equal(t, b64(root), *rep.RootHash)
	require.Equal(t, int64(old), rep.Previous.TreeSize)
	require.Len(t, rep.Entries, 1)
	require.True(t, rep.Entries[0].Included, "%+v", rep.Entries[0])
	require.Equal(t, int64(seq), rep.Entries[0].Seq)
	require.Equal(t, int64(size), next.Checkpoint.TreeSize)
	require.Equal(t, t1, next.Checkpoint.VerifiedAt)

	// A server claiming the old tree is not a prefix is caught at this size too.
	ev.Consistency.OldRoot = b64(root)
	_, _, err = verifyLog(ev, held, t1.Add(time.Second))
	require.Error(t, err)
}

// jsonStrings is ss as a JSON array (base64 needs no escaping).
func jsonStrings(ss []string) string {
	out := "["
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += `"` + s + `"`
	}
	return out + "]"
}
