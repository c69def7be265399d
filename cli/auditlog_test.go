package cli

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
	"google.golang.org/protobuf/proto"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/platform/auditlog"
)

// memLog is a log's tree in memory, as the ledger stores it: record 0 a
// genesis record, record n the canonical encoding of the entry with seq n
// (each entry named by its subject, the test's text for it).
type memLog struct {
	hashes   []tlog.Hash
	records  [][]byte
	subjects []string
	// entries[n] is the entry with seq n as the API shows it (nil for 0),
	// head the chain hash of the last.
	entries []*ledgerv1.AuditEntry
	head    [32]byte
}

func newMemLog(t *testing.T, subjects ...string) *memLog {
	l := &memLog{}
	l.addRecord(t, auditlog.GenesisRecord)
	l.entries = append(l.entries, nil)
	for _, s := range subjects {
		l.add(t, s)
	}
	return l
}

func (l *memLog) reader() tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = l.hashes[x]
		}
		return out, nil
	})
}

// add appends the entry with the next seq, about subject.
func (l *memLog) add(t *testing.T, subject string) {
	t.Helper()
	seq := l.size()
	l.addEntry(t, auditlog.Entry{Seq: seq, Kind: "deposit", At: t0.Add(time.Duration(seq) * time.Microsecond), Actor: "admin",
		Subject: subject, Amount: seq * 1_500_000, Attrs: map[string]string{"unit": "micro_cc"}})
}

// addEntry appends e, whose seq is the next one.
func (l *memLog) addEntry(t *testing.T, e auditlog.Entry) {
	t.Helper()
	require.Equal(t, l.size(), e.Seq)
	subject := e.Subject
	shown := shownEntry(e, l.head)
	l.addRecord(t, auditlog.Encode(e))
	l.subjects = append(l.subjects, subject)
	l.entries = append(l.entries, shown)
	l.head = auditlog.ChainHash(l.head, e)
}

// shownEntry is e after prev as GET /api/audit shows it.
func shownEntry(e auditlog.Entry, prev [32]byte) *ledgerv1.AuditEntry {
	h := auditlog.ChainHash(prev, e)
	return &ledgerv1.AuditEntry{Seq: e.Seq, Kind: e.Kind, Actor: e.Actor, Subject: e.Subject,
		Amount: float64(e.Amount) / 1e6, AmountMicros: strconv.FormatInt(e.Amount, 10), Unit: "cc", Attrs: e.Attrs,
		PrevHash: hex.EncodeToString(prev[:]), Hash: hex.EncodeToString(h[:]), CreatedAt: e.At.UTC().Format(time.RFC3339Nano)}
}

func (l *memLog) addRecord(t *testing.T, record []byte) {
	t.Helper()
	hs, err := tlog.StoredHashes(int64(len(l.records)), record, l.reader())
	require.NoError(t, err)
	l.hashes = append(l.hashes, hs...)
	l.records = append(l.records, record)
}

func (l *memLog) size() int64 { return int64(len(l.records)) }

func (l *memLog) root(t *testing.T, n int64) tlog.Hash {
	t.Helper()
	h, err := tlog.TreeHash(n, l.reader())
	require.NoError(t, err)
	return h
}

// note is the checkpoint of the tree of n records, signed by skey.
func (l *memLog) note(t *testing.T, skey string, n int64) string {
	t.Helper()
	s, err := note.NewSigner(skey)
	require.NoError(t, err)
	root := l.root(t, n)
	msg, err := note.Sign(&note.Note{Text: s.Name() + "\n" + strconv.FormatInt(n, 10) + "\n" + b64(root) + "\n"}, s)
	require.NoError(t, err)
	return string(msg)
}

// consistency is the server's answer for GET /api/audit/consistency.
func (l *memLog) consistency(t *testing.T, from, to int64) *ledgerv1.GetAuditConsistencyResponse {
	t.Helper()
	p, err := tlog.ProveTree(to, from, l.reader())
	require.NoError(t, err)
	return &ledgerv1.GetAuditConsistencyResponse{From: from, To: to, OldRoot: b64(l.root(t, from)),
		NewRoot: b64(l.root(t, to)), Proof: b64s(p)}
}

// proof is the server's answer for GET /api/audit/entries/{seq}/proof.
func (l *memLog) proof(t *testing.T, seq, n int64) *ledgerv1.GetAuditProofResponse {
	t.Helper()
	p, err := tlog.ProveRecord(n, seq, l.reader())
	require.NoError(t, err)
	return &ledgerv1.GetAuditProofResponse{Seq: seq, TreeSize: n, LeafHash: b64(tlog.RecordHash(l.records[seq])),
		Proof: b64s(p), Entry: proto.Clone(l.entries[seq]).(*ledgerv1.AuditEntry)}
}

func b64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

func b64s(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = b64(h)
	}
	return out
}

func mustHashes(t *testing.T, list []string) tlog.TreeProof {
	t.Helper()
	hs, err := parseHashes(list)
	require.NoError(t, err)
	return hs
}

func entries(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s entry %d", prefix, i+1)
	}
	return out
}

func genKey(t *testing.T, name string) (skey, vkey string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	require.NoError(t, err)
	return skey, vkey
}

// evidence is what an honest server holding l answers when its latest
// checkpoint has n records, for a client holding held.
func evidence(t *testing.T, l *memLog, skey, vkey string, n int64, held auditState, seqs ...int64) logEvidence {
	t.Helper()
	from := n
	if held.Checkpoint != nil {
		from = held.Checkpoint.TreeSize
	}
	ev := logEvidence{ServedKey: vkey + "\n", Note: l.note(t, skey, n), Consistency: l.consistency(t, from, n)}
	for _, s := range seqs {
		ev.Entries = append(ev.Entries, entryEvidence{Seq: s, Proof: l.proof(t, s, n)})
	}
	return ev
}

var (
	t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func requireLogFails(t *testing.T, rep logReport, next *auditState, err error, want string) {
	t.Helper()
	require.Error(t, err)
	require.IsType(t, &logError{}, err)
	require.Contains(t, err.Error(), want)
	require.False(t, rep.Valid)
	require.NotNil(t, rep.Reason)
	require.Nil(t, next, "nothing is kept from a checkpoint that failed")
	require.Equal(t, ExitFailed, exitCode(err))
}

// firstRun verifies l's checkpoint of n records for a client that never
// saw the server, and returns what it keeps.
func firstRun(t *testing.T, l *memLog, skey, vkey string, n int64) auditState {
	t.Helper()
	held := auditState{Server: "http://ledger.test", path: "/state/ledger.json"}
	rep, next, err := verifyLog(evidence(t, l, skey, vkey, n, held), held, t0)
	require.NoError(t, err)
	require.True(t, rep.Valid)
	require.Equal(t, "first_use", rep.KeyTrust)
	require.NotNil(t, next)
	require.Equal(t, vkey, next.VerifierKey, "trusted on first use")
	require.Equal(t, t0, next.KeyTrustedAt)
	require.Equal(t, n, next.Checkpoint.TreeSize)
	return *next
}

func TestVerifyLogSoundExtension(t *testing.T) {
	skey, vkey := genKey(t, "foundry-audit")
	l := newMemLog(t, entries(6, "a")...)
	held := firstRun(t, l, skey, vkey, 7)

	for _, e := range entries(10, "b") {
		l.add(t, e)
	}
	rep, next, err := verifyLog(evidence(t, l, skey, vkey, 17, held, 3, 12), held, t1)
	require.NoError(t, err)
	require.True(t, rep.Valid)
	require.Nil(t, rep.Reason)
	require.Equal(t, "stored", rep.KeyTrust)
	require.Equal(t, "foundry-audit", *rep.Origin)
	require.Equal(t, int64(17), *rep.TreeSize)
	require.Equal(t, b64(l.root(t, 17)), *rep.RootHash)
	require.Equal(t, &previousReport{TreeSize: 7, RootHash: held.Checkpoint.RootHash, VerifiedAt: "2030-01-02T03:04:05Z", Extended: true},
		rep.Previous)
	require.Len(t, rep.Entries, 2)
	for _, en := range rep.Entries {
		require.True(t, en.Included, "%+v", en)
		require.Nil(t, en.Reason)
	}
	require.NotNil(t, next)
	require.Equal(t, int64(17), next.Checkpoint.TreeSize)
	require.Equal(t, t1, next.Checkpoint.VerifiedAt)
	require.Equal(t, t0, next.KeyTrustedAt, "the key's first trust is kept")
	body := func(note string) string { b, _, _ := strings.Cut(note, "\n\n"); return b }
	require.Equal(t, body(l.note(t, skey, 17)), body(next.Checkpoint.Note), "the checkpoint's text is kept")

	// The same checkpoint again: nothing grew, nothing to object to.
	_, _, err = verifyLog(evidence(t, l, skey, vkey, 17, *next), *next, t1)
	require.NoError(t, err)
}

func TestVerifyLogRewrittenHistory(t *testing.T) {
	skey, vkey := genKey(t, "foundry-audit")
	for _, heldSize := range []int64{7, 8} { // 8: a power of two, which the proof takes from the client
		t.Run(fmt.Sprint(heldSize), func(t *testing.T) {
			honest := newMemLog(t, entries(int(heldSize)-1, "a")...)
			held := firstRun(t, honest, skey, vkey, heldSize)

			// Entry 3 rewritten, every later hash recomputed, and the tree
			// grown and signed again with the ledger's own key.
			forged := entries(15, "a")
			forged[2] = "a entry 3, rewritten"
			rewritten := newMemLog(t, forged...)
			rep, next, err := verifyLog(evidence(t, rewritten, skey, vkey, 16, held), held, t1)
			requireLogFails(t, rep, next, err, fmt.Sprintf("the audit log's history was rewritten since the checkpoint this client holds "+
				"(tree size %d, verified 2030-01-02T03:04:05Z)", heldSize))
			require.False(t, rep.Previous.Extended)

			// The same size, signed again over the rewritten tree.
			rep, next, err = verifyLog(evidence(t, rewritten, skey, vkey, heldSize, held), held, t1)
			requireLogFails(t, rep, next, err, "history was rewritten")
			require.ErrorContains(t, err, fmt.Sprintf("the server's signed checkpoint of that tree size has another root (%s, held %s)",
				b64(rewritten.root(t, heldSize)), held.Checkpoint.RootHash))

			// A server that still serves the honest checkpoints but whose
			// stored tree was rebuilt from rewritten entries (the ledger
			// stops signing then): its proof and roots come from that tree.
			for _, e := range entries(8, "b") {
				honest.add(t, e)
			}
			recs := slices.Clone(honest.subjects)
			recs[2] = "a entry 3, rewritten"
			rebuilt := newMemLog(t, recs...)
			ev := evidence(t, honest, skey, vkey, honest.size(), held)
			ev.Consistency = rebuilt.consistency(t, heldSize, honest.size())
			rep, next, err = verifyLog(ev, held, t1)
			requireLogFails(t, rep, next, err, "history was rewritten")
			if heldSize == 8 {
				// The proof alone checks out: the old tree is the client's.
				require.NoError(t, tlog.CheckTree(mustHashes(t, ev.Consistency.GetProof()), honest.size(), honest.root(t, honest.size()),
					8, honest.root(t, 8)))
				require.ErrorContains(t, err, "the server's stored tree of size 8 no longer hashes to the root it had")
			}
		})
	}
}

func TestVerifyLogSignature(t *testing.T) {
	skey, vkey := genKey(t, "foundry-audit")
	l := newMemLog(t, entries(4, "a")...)
	held := firstRun(t, l, skey, vkey, 5)
	l.add(t, "a entry 5")

	// Another key of the same name.
	other, _ := genKey(t, "foundry-audit")
	ev := evidence(t, l, skey, vkey, 6, held)
	ev.Note = l.note(t, other, 6)
	rep, next, err := verifyLog(ev, held, t1)
	requireLogFails(t, rep, next, err, "the audit checkpoint is not signed by the trusted key foundry-audit (key hash ")

	// The signature of another text.
	ev = evidence(t, l, skey, vkey, 6, held)
	ev.Note = strings.Replace(ev.Note, "\n6\n", "\n5\n", 1)
	rep, next, err = verifyLog(ev, held, t1)
	requireLogFails(t, rep, next, err, "the audit checkpoint's signature by foundry-audit (key hash ")
	require.Contains(t, err.Error(), "does not verify: the checkpoint was forged or altered")

	// Not a note at all.
	ev.Note = "foundry-audit\n6\n"
	rep, next, err = verifyLog(ev, held, t1)
	requireLogFails(t, rep, next, err, "the audit checkpoint is not a signed note")

	// Signed by the key, but not a checkpoint of its log.
	s, err := note.NewSigner(skey)
	require.NoError(t, err)
	msg, err := note.Sign(&note.Note{Text: "another-log\n6\n" + b64(l.root(t, 6)) + "\n"}, s)
	require.NoError(t, err)
	ev.Note = string(msg)
	rep, next, err = verifyLog(ev, held, t1)
	requireLogFails(t, rep, next, err, `the audit checkpoint's origin "another-log" is not the key's name "foundry-audit"`)
}

func TestVerifyLogRolledBack(t *testing.T) {
	skey, vkey := genKey(t, "foundry-audit")
	l := newMemLog(t, entries(9, "a")...)
	held := firstRun(t, l, skey, vkey, 10)
	ev := evidence(t, l, skey, vkey, 6, auditState{})
	ev.Consistency = nil // the client asks for none: from would be past to
	rep, next, err := verifyLog(ev, held, t1)
	requireLogFails(t, rep, next, err, "the audit log was rolled back: the server's checkpoint has tree size 6, "+
		"but this client verified one of tree size 10, verified 2030-01-02T03:04:05Z")

	rep, next, err = verifyLog(logEvidence{ServedKey: vkey}, held, t1)
	requireLogFails(t, rep, next, err, "the server has no audit checkpoint, but this client verified one (tree size 10, ")
}

func TestVerifyLogKeyChange(t *testing.T) {
	skey, vkey := genKey(t, "foundry-audit")
	l := newMemLog(t, entries(4, "a")...)
	held := firstRun(t, l, skey, vkey, 5)
	l.add(t, "a entry 5")

	newSkey, newVkey := genKey(t, "foundry-audit")
	ev := evidence(t, l, newSkey, newVkey, 6, held)
	rep, next, err := verifyLog(ev, held, t1)
	requireLogFails(t, rep, next, err, "the server's audit verifier key changed: it serves "+newVkey+", but this client trusts "+vkey+
		" (since 2030-01-02T03:04:05Z, kept in /state/ledger.json)")
	require.Contains(t, err.Error(), "run again with --key "+newVkey)

	// The operator confirmed it: --key replaces the trusted key, and the
	// history must still extend the checkpoint held.
	ev.GivenKey = newVkey
	rep, next, err = verifyLog(ev, held, t1)
	require.NoError(t, err)
	require.Equal(t, "given", rep.KeyTrust)
	require.True(t, rep.Previous.Extended)
	require.Equal(t, newVkey, next.VerifierKey)
	require.Equal(t, t1, next.KeyTrustedAt)

	// --key that is not the one that signed.
	ev.GivenKey = vkey
	rep, next, err = verifyLog(ev, held, t1)
	requireLogFails(t, rep, next, err, "is not signed by the trusted key")
}

// keyChangeLog is a log of four entries whose first checkpoint (size 5)
// the old key signed, then the change of key at seq 5, signed by the
// new key and by each of counter, and one entry more: what a ledger
// records when its key is rotated. It returns the log, the new key and
// the change as GET /api/audit/key-changes lists it.
func keyChangeLog(t *testing.T, oldVkey string, counter ...string) (*memLog, string, string, *ledgerv1.AuditKeyChange) {
	t.Helper()
	l := newMemLog(t, entries(4, "a")...)
	newSkey, newVkey := genKey(t, "foundry-audit")
	signers := []note.Signer{noteSigner(t, newSkey)}
	for _, skey := range counter {
		signers = append(signers, noteSigner(t, skey))
	}
	k := auditlog.KeyChange{Origin: "foundry-audit", Seq: 5, From: oldVkey, To: newVkey}
	statement, err := auditlog.SignKeyChange(k, signers...)
	require.NoError(t, err)
	countersigned := strconv.FormatBool(len(counter) > 0)
	l.addEntry(t, auditlog.Entry{Seq: 5, Kind: auditlog.KeyChangedKind, At: t0.Add(5 * time.Microsecond), Actor: "sequencer",
		Subject: "foundry-audit", Attrs: map[string]string{auditlog.FromAttr: oldVkey, auditlog.ToAttr: newVkey,
			auditlog.StatementAttr: statement, auditlog.CountersignedAttr: countersigned}})
	l.add(t, "a entry 6")
	return l, newSkey, newVkey, &ledgerv1.AuditKeyChange{Seq: 5, FromKey: oldVkey, ToKey: newVkey, Statement: statement,
		Countersigned: len(counter) > 0}
}

func noteSigner(t *testing.T, skey string) note.Signer {
	t.Helper()
	s, err := note.NewSigner(skey)
	require.NoError(t, err)
	return s
}

// TestVerifyLogFollowsACountersignedKeyChange: a client that trusts the
// old key follows the log's change to the new one by the old key's
// countersignature and the change's inclusion in the tree the new key
// signed, which extends the checkpoint it holds; anything less is refused
// as any change of key is.
func TestVerifyLogFollowsACountersignedKeyChange(t *testing.T) {
	skey, vkey := genKey(t, "foundry-audit")
	l, newSkey, newVkey, change := keyChangeLog(t, vkey, skey)
	held := firstRun(t, l, skey, vkey, 5)

	ev := evidence(t, l, newSkey, newVkey, 7, held)
	ev.KeyChanges = []*ledgerv1.AuditKeyChange{change}
	ev.KeyChangeProofs = []entryEvidence{{Seq: 5, Proof: l.proof(t, 5, 7)}}
	rep, next, err := verifyLog(ev, held, t1)
	require.NoError(t, err)
	require.True(t, rep.Valid)
	require.Equal(t, "key_change", rep.KeyTrust)
	require.Equal(t, newVkey, rep.VerifierKey)
	require.Equal(t, []keyChangeReport{{Seq: 5, From: vkey, To: newVkey}}, rep.KeyChanges)
	require.True(t, rep.Previous.Extended, "the new key's tree extends the old key's")
	require.Equal(t, newVkey, next.VerifierKey, "the new key is trusted from now on")
	require.Equal(t, t1, next.KeyTrustedAt)
	require.Equal(t, int64(7), next.Checkpoint.TreeSize)
	rows := logRows(rep)
	require.Contains(t, rows, []string{"log_verifier_key", newVkey + " (followed the log's countersigned key change at seq 5 from " +
		vkey + ")"})

	t.Run("no proof of the change", func(t *testing.T) {
		ev := ev
		ev.KeyChangeProofs = nil
		rep, next, err := verifyLog(ev, held, t1)
		requireLogFails(t, rep, next, err, "the server gave no proof of its change of audit key at seq 5")
	})
	t.Run("a change the log does not hold", func(t *testing.T) {
		// The server lists the change, but entry 5 of the tree it signed
		// is a deposit.
		other := newMemLog(t, entries(6, "a")...)
		held := firstRun(t, other, skey, vkey, 5)
		ev := evidence(t, other, newSkey, newVkey, 7, held)
		ev.KeyChanges = []*ledgerv1.AuditKeyChange{change}
		ev.KeyChangeProofs = []entryEvidence{{Seq: 5, Proof: other.proof(t, 5, 7)}}
		rep, next, err := verifyLog(ev, held, t1)
		requireLogFails(t, rep, next, err, "the signed log's entry 5 is not the change of audit key the server lists (a deposit)")
	})
	t.Run("a held checkpoint the old key signed after its change", func(t *testing.T) {
		held := firstRun(t, l, skey, vkey, 7)
		ev := evidence(t, l, newSkey, newVkey, 7, held)
		ev.KeyChanges = []*ledgerv1.AuditKeyChange{change}
		ev.KeyChangeProofs = []entryEvidence{{Seq: 5, Proof: l.proof(t, 5, 7)}}
		rep, next, err := verifyLog(ev, held, t1)
		requireLogFails(t, rep, next, err, "signed by "+vkey+" that covers seq 5, where the log records that key's change to "+
			newVkey+": it was signed after the key was retired")
	})
	t.Run("a change the old key did not countersign", func(t *testing.T) {
		l, newSkey, newVkey, change := keyChangeLog(t, vkey)
		held := firstRun(t, l, skey, vkey, 5)
		ev := evidence(t, l, newSkey, newVkey, 7, held)
		ev.KeyChanges = []*ledgerv1.AuditKeyChange{change}
		rep, next, err := verifyLog(ev, held, t1)
		requireLogFails(t, rep, next, err, "the server's audit verifier key changed from "+vkey+" to "+newVkey+
			" at seq 5 without the old key's countersignature, so this client cannot follow it by signature. "+
			"If the operator confirms the new key, run again with --key "+newVkey)
	})
	t.Run("a forger's statement claiming the old key's countersignature", func(t *testing.T) {
		forged := proto.Clone(change).(*ledgerv1.AuditKeyChange)
		forged.Countersigned = true
		_, forgerV := genKey(t, "foundry-audit")
		forged.ToKey = forgerV
		rep, next, err := verifyLog(logEvidence{ServedKey: forgerV, Note: l.note(t, newSkey, 7), KeyChanges: []*ledgerv1.AuditKeyChange{forged}},
			held, t1)
		requireLogFails(t, rep, next, err, "the server's change of audit key at seq 5 is not the one its statement signs")
	})
}

func TestVerifyLogEntries(t *testing.T) {
	skey, vkey := genKey(t, "foundry-audit")
	l := newMemLog(t, entries(9, "a")...)
	held := firstRun(t, l, skey, vkey, 10)

	// Entry 4 rewritten in the store after it was sequenced, its hash
	// recomputed: the server shows it as stored now, and the leaf of what
	// it shows is not the one the tree it signed holds.
	ev := evidence(t, l, skey, vkey, 10, held, 2, 4)
	rewritten := auditlog.Entry{Seq: 4, Kind: "deposit", At: t0.Add(4 * time.Microsecond), Actor: "admin",
		Subject: "a entry 4, rewritten", Amount: 6_000_000, Attrs: map[string]string{"unit": "micro_cc"}}
	prev, err := hex.DecodeString(l.entries[3].GetHash())
	require.NoError(t, err)
	ev.Entries[1].Proof.Entry = shownEntry(rewritten, [32]byte(prev))
	leaf := auditlog.Leaf(rewritten)
	ev.Entries[1].Proof.LeafHash = b64(leaf)
	ev.Entries = append(ev.Entries, entryEvidence{Seq: 10})
	ev.Entries = append(ev.Entries, entryEvidence{Seq: 7, Err: "audit entry 7 is missing from the chain"})
	rep, next, err := verifyLog(ev, held, t1)
	require.Error(t, err)
	require.IsType(t, &logError{}, err)
	require.False(t, rep.Valid)
	require.NotNil(t, next, "the checkpoint checked out: it is kept")
	require.Equal(t, []bool{true, false, false, false}, []bool{rep.Entries[0].Included, rep.Entries[1].Included,
		rep.Entries[2].Included, rep.Entries[3].Included})
	require.Equal(t, "not in the log as signed: the entry as the server shows it does not hash to the leaf the signed tree holds "+
		"(it was changed after it was sequenced)", *rep.Entries[1].Reason)
	require.Equal(t, b64(leaf), *rep.Entries[1].LeafHash, "the leaf this client computed")
	require.Contains(t, *rep.Entries[2].Reason, "not covered by the signed checkpoint (tree size 10 covers seq 1 to 9)")
	require.Contains(t, *rep.Entries[3].Reason, "audit entry 7 is missing from the chain")
	require.Contains(t, err.Error(), "audit entry 4: not in the log as signed")

	// A server that shows the rewritten entry beside the proof of the
	// entry it signed (its leaf hash from the stored encoding): the leaf
	// is recomputed from what is shown, whatever the server says it is.
	ev = evidence(t, l, skey, vkey, 10, held, 4)
	ev.Entries[0].Proof.Entry = shownEntry(rewritten, [32]byte(prev))
	_, _, err = verifyLog(ev, held, t1)
	require.ErrorContains(t, err, "audit entry 4: the server's leaf hash ("+b64(tlog.RecordHash(l.records[4]))+
		") is not the hash of the entry it shows ("+b64(leaf)+")")

	// The parts of the answer disagree: an amount that is not its
	// micro-units, a hash that does not cover the fields, no entry at all.
	for name, tc := range map[string]struct {
		edit func(*ledgerv1.AuditEntry)
		want string
	}{
		"amount":  {func(e *ledgerv1.AuditEntry) { e.Amount = 7 }, "the entry's amount (7) is not its amount_micros (6000000) in whole units"},
		"hash":    {func(e *ledgerv1.AuditEntry) { e.Hash = strings.Repeat("0", 64) }, "the entry's hash does not cover the entry shown after its prev_hash"},
		"hex":     {func(e *ledgerv1.AuditEntry) { e.PrevHash = "zz" }, "the entry's prev_hash or hash is not hex SHA-256"},
		"seq":     {func(e *ledgerv1.AuditEntry) { e.Seq = 5 }, "the server's proof shows the entry with seq 5"},
		"micros":  {func(e *ledgerv1.AuditEntry) { e.AmountMicros = "6.0" }, `the entry's amount_micros "6.0" is not a whole number`},
		"created": {func(e *ledgerv1.AuditEntry) { e.CreatedAt = "yesterday" }, `the entry's created_at "yesterday" is not an RFC 3339 time`},
	} {
		ev = evidence(t, l, skey, vkey, 10, held, 4)
		tc.edit(ev.Entries[0].Proof.Entry)
		_, _, err = verifyLog(ev, held, t1)
		require.ErrorContains(t, err, "audit entry 4: "+tc.want, name)
	}
	ev = evidence(t, l, skey, vkey, 10, held, 4)
	ev.Entries[0].Proof.Entry = nil
	_, _, err = verifyLog(ev, held, t1)
	require.ErrorContains(t, err, "audit entry 4: the server's proof shows no entry")

	// A proof for another tree than the signed one.
	ev = evidence(t, l, skey, vkey, 10, held, 4)
	ev.Entries[0].Proof = l.proof(t, 4, 9)
	_, _, err = verifyLog(ev, held, t1)
	require.ErrorContains(t, err, "the server's proof is for seq 4 in the tree of size 9, not seq 4 in 10")
}

func TestVerifyLogNoCheckpointYet(t *testing.T) {
	_, vkey := genKey(t, "foundry-audit")
	held := auditState{Server: "http://ledger.test", path: "/state/ledger.json"}
	rep, next, err := verifyLog(logEvidence{ServedKey: vkey}, held, t0)
	require.NoError(t, err)
	require.True(t, rep.Valid)
	require.Nil(t, rep.TreeSize)
	require.Equal(t, vkey, next.VerifierKey, "the key is trusted already")
	require.Nil(t, next.Checkpoint)
}

func TestAuditStateFile(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, "", auditStateDir(func(string) string { return "" }))
	require.Equal(t, filepath.Join(dir, "foundry", "audit"), auditStateDir(func(k string) string {
		return map[string]string{"XDG_CONFIG_HOME": dir, "HOME": "/nowhere"}[k]
	}))
	a := auditStateFile(dir, "http://127.0.0.1:8080")
	require.Regexp(t, `/http_127\.0\.0\.1_8080-[0-9a-f]{8}\.json$`, a)
	require.NotEqual(t, a, auditStateFile(dir, "http://127.0.0.1_8080"), "addresses that make the same name")

	path := filepath.Join(dir, "sub", "state.json")
	st, err := loadAuditState(path, "http://x")
	require.NoError(t, err)
	require.Equal(t, auditState{Server: "http://x", path: path}, st)
	st.VerifierKey, st.KeyTrustedAt = "k+1+2", t0
	st.Checkpoint = &heldCheckpoint{Note: "n", TreeSize: 3, RootHash: b64(tlog.Hash{1}), VerifiedAt: t1}
	require.NoError(t, st.save())
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	got, err := loadAuditState(path, "http://x")
	require.NoError(t, err)
	require.Equal(t, st, got)
	left, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, left, 1, "no temporary file is left")

	_, err = loadAuditState(path, "http://y")
	require.ErrorContains(t, err, "is the state of http://x, not of http://y")
	require.NoError(t, os.WriteFile(path, []byte("{"), 0o600))
	_, err = loadAuditState(path, "http://x")
	require.ErrorContains(t, err, "is not the state audit verify keeps")
}

// TestVerifyLogWitnesses: with --witness, the checkpoint must carry a
// valid cosignature by each witness; a checkpoint the log signed alone, or
// cosigned by another witness, or whose cosignature is over other text,
// fails, as a fork shown to this client alone would.
func TestVerifyLogWitnesses(t *testing.T) {
	skey, vkey := genKey(t, "foundry-audit")
	wskey, wvkey := genKey(t, "acme-witness")
	_, otherW := genKey(t, "other-witness")
	l := newMemLog(t, entries(5, "a")...)
	held := auditState{Server: "http://ledger.test", path: "/state/ledger.json"}
	cosign := func(signed string) string {
		t.Helper()
		s, err := fnote.NewSignerForCosignatureV1(wskey)
		require.NoError(t, err)
		n, err := note.Open([]byte(signed), note.VerifierList(mustVerifier(t, vkey)))
		require.NoError(t, err)
		out, err := note.Sign(n, s)
		require.NoError(t, err)
		return string(out)
	}

	ev := evidence(t, l, skey, vkey, 6, held)
	ev.Note, ev.Witnesses = cosign(ev.Note), []string{wvkey}
	rep, _, err := verifyLog(ev, held, t0)
	require.NoError(t, err)
	require.True(t, rep.Valid)
	require.Equal(t, []string{wvkey}, rep.Witnesses)

	for name, c := range map[string]struct {
		note      func(string) string
		witnesses []string
		want      string
	}{
		"not cosigned":     {func(s string) string { return s }, []string{wvkey}, "is not cosigned by the witness acme-witness"},
		"another witness":  {cosign, []string{wvkey, otherW}, "is not cosigned by the witness other-witness"},
		"a cosig replayed": {func(s string) string { return s + cosignLines(cosign(l.note(t, skey, 5))) }, []string{wvkey}, "do not verify"},
	} {
		ev := evidence(t, l, skey, vkey, 6, held)
		ev.Note, ev.Witnesses = c.note(ev.Note), c.witnesses
		rep, next, err := verifyLog(ev, held, t0)
		requireLogFails(t, rep, next, err, c.want)
		require.Contains(t, err.Error(), c.want, name)
	}
}

// cosignLines are the signature lines of a signed note after the log's.
func cosignLines(signed string) string {
	lines := strings.SplitAfter(signed, "\n")
	return strings.Join(lines[len(lines)-2:], "")
}

func mustVerifier(t *testing.T, vkey string) note.Verifier {
	t.Helper()
	v, err := note.NewVerifier(vkey)
	require.NoError(t, err)
	return v
}
