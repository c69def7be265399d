package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/platform/auditlog"
)

// The client's own verification of the ledger's audit log (audit verify).
// The log is a Merkle tree (golang.org/x/mod/sumdb/tlog: record 0 a fixed
// genesis record, record n the audit entry with seq n) whose tree heads
// the ledger signs as checkpoints (signed notes, golang.org/x/mod/sumdb/
// note, Ed25519, origin the key's name). The client trusts the server's
// verifier key on first use (or --key), keeps the last checkpoint it
// verified for each server, and checks that every later checkpoint is
// signed by that key and extends the one it holds: a server that rewrote
// or rolled back its history cannot hide it from a client that saw it
// before. verifyLog is that check, on what was fetched; the command does
// the fetching and keeps the state.

// auditState is what the client keeps about one server's log, in
// auditStateDir: the key it trusts and the last checkpoint it verified.
type auditState struct {
	// Server is the server the state is about (the REST URL, or
	// grpc://address).
	Server string `json:"server"`
	// VerifierKey is the key trusted for the server's checkpoints.
	VerifierKey string `json:"verifier_key"`
	// KeyTrustedAt is when the key was first trusted (or given with --key).
	KeyTrustedAt time.Time `json:"key_trusted_at"`
	// Checkpoint is the last checkpoint verified; nil before the first.
	Checkpoint *heldCheckpoint `json:"checkpoint,omitempty"`

	// path is the file the state is kept in (not stored).
	path string
}

// heldCheckpoint is a checkpoint the client verified: the signed note as
// served (evidence the server signed it), its size and root.
type heldCheckpoint struct {
	Note       string    `json:"note"`
	TreeSize   int64     `json:"tree_size"`
	RootHash   string    `json:"root_hash"`
	VerifiedAt time.Time `json:"verified_at"`
}

// root is the held checkpoint's root hash.
func (h *heldCheckpoint) root() (tlog.Hash, error) { return parseRoot(h.RootHash) }

// describe names a held checkpoint in messages.
func (h *heldCheckpoint) describe() string {
	return fmt.Sprintf("tree size %d, verified %s", h.TreeSize, h.VerifiedAt.UTC().Format(time.RFC3339))
}

// logEvidence is what the server answered for one verification.
type logEvidence struct {
	// GivenKey is the verifier key given with --key ("" for none).
	GivenKey string
	// ServedKey is the server's verifier key (GET /api/audit/verifier-key).
	ServedKey string
	// Note is the latest signed checkpoint as served (GET
	// /api/audit/checkpoint); "" when the server has none yet.
	Note string
	// Consistency is the server's proof that the tree of the held
	// checkpoint's size (without one: of the new size) is a prefix of the
	// new checkpoint's tree (GET /api/audit/consistency); nil when it was
	// not asked for (the new checkpoint is smaller, or unreadable).
	Consistency *ledgerv1.GetAuditConsistencyResponse
	// Entries are the inclusion proofs of the entries asked for (--entry).
	Entries []entryEvidence
	// Witnesses are the verifier keys of the witnesses whose cosignature
	// the checkpoint must carry (--witness).
	Witnesses []string
	// KeyChanges are the log's changes of signing key (GET
	// /api/audit/key-changes), asked for when the server serves another
	// key than the one trusted; KeyChangeProofs the inclusion proofs of
	// those that lead to it (followKeys), in order.
	KeyChanges      []*ledgerv1.AuditKeyChange
	KeyChangeProofs []entryEvidence
}

// entryEvidence is the server's answer for one entry's inclusion proof.
type entryEvidence struct {
	Seq int64
	// Proof is the proof (GET /api/audit/entries/{seq}/proof); nil when
	// the server refused it (Err says why) or it was not asked for.
	Proof *ledgerv1.GetAuditProofResponse
	Err   string
}

// logReport is what verifyLog found; its JSON is the "log" member of
// audit verify --json, with the API's conventions (every field present,
// null for none).
type logReport struct {
	// Valid is true when the checkpoint and every entry asked for checked out.
	Valid bool `json:"valid"`
	// Reason says what did not (null when valid).
	Reason *string `json:"reason"`
	// VerifierKey is the key the checkpoint was verified with, and
	// KeyTrust how it came to be trusted: "given" (--key), "stored" (an
	// earlier run trusted it), "first_use" (this run did) or "key_change"
	// (this run followed the log's countersigned changes of key from the
	// one it trusted, KeyChanges).
	VerifierKey string            `json:"verifier_key"`
	KeyTrust    string            `json:"key_trust"`
	KeyChanges  []keyChangeReport `json:"key_changes"`
	// Origin, TreeSize and RootHash are the server's checkpoint (null
	// before the log's first checkpoint, or when it did not verify).
	Origin   *string `json:"origin"`
	TreeSize *int64  `json:"tree_size"`
	RootHash *string `json:"root_hash"`
	// Previous is the checkpoint the client held (null for none).
	Previous *previousReport `json:"previous"`
	// Entries are the entries asked for, in order.
	Entries []entryReport `json:"entries"`
	// Witnesses are the witnesses whose cosignatures the checkpoint was
	// required to carry, and carries (--witness; empty for none).
	Witnesses []string `json:"witnesses"`
	// StateFile is where the client keeps what it trusts for this server.
	StateFile string `json:"state_file"`
}

// previousReport is the checkpoint held before this run and whether the
// server's new checkpoint was proven to extend it.
type previousReport struct {
	TreeSize   int64  `json:"tree_size"`
	RootHash   string `json:"root_hash"`
	VerifiedAt string `json:"verified_at"`
	Extended   bool   `json:"extended"`
}

// entryReport is one entry's inclusion in the signed tree.
type entryReport struct {
	Seq      int64   `json:"seq"`
	Included bool    `json:"included"`
	LeafHash *string `json:"leaf_hash"`
	Reason   *string `json:"reason"`
}

// logError is a verification of the log that failed: the report is
// printed, and the command exits 1.
type logError struct{ msg string }

func (l *logError) Error() string { return l.msg }

func logFailure(format string, args ...any) *logError {
	return &logError{fmt.Sprintf(format, args...)}
}

// verifyLog checks what a server answered against what the client holds
// for it (held, the zero state with its path for a server never verified
// before), at now. It returns the report and, when the checkpoint checked
// out (whatever the entries did), the state to keep; an error (a
// *logError) when anything failed.
//
// The checks, in order: the verifier key (--key, else the one the client
// trusts, else the server's, trusted on first use; a server that now
// serves another key than the one trusted is refused); the checkpoint's
// signature by that key, its origin (the key's name), size and root; the
// size against the held checkpoint's (smaller: rolled back); the
// consistency proof from the held checkpoint to the new one (tlog.CheckTree),
// and the roots the server computed from its stored tree against the
// signed ones (different: the stored history is not the one signed); each
// entry's inclusion proof against the signed root (tlog.CheckRecord),
// with the leaf this client recomputes from the entry the server shows
// (shownLeaf), so an entry shown otherwise than it was sequenced fails.
func verifyLog(ev logEvidence, held auditState, now time.Time) (logReport, *auditState, error) {
	rep := logReport{Entries: []entryReport{}, Witnesses: []string{}, KeyChanges: []keyChangeReport{}, StateFile: held.path}
	fail := func(err *logError) (logReport, *auditState, error) {
		rep.Valid = false
		rep.Reason = &err.msg
		return rep, nil, err
	}
	next := held
	served := strings.TrimSpace(ev.ServedKey)
	var followed []*ledgerv1.AuditKeyChange
	switch {
	case ev.GivenKey != "":
		rep.VerifierKey, rep.KeyTrust = ev.GivenKey, "given"
		if ev.GivenKey != held.VerifierKey {
			next.VerifierKey, next.KeyTrustedAt = ev.GivenKey, now
		}
	case held.VerifierKey != "" && served == held.VerifierKey:
		rep.VerifierKey, rep.KeyTrust = held.VerifierKey, "stored"
	case held.VerifierKey != "":
		rep.VerifierKey, rep.KeyTrust = held.VerifierKey, "stored"
		path, bad := followKeys(ev.KeyChanges, held.VerifierKey, served)
		switch {
		case bad != nil:
			return fail(bad)
		case path == nil:
			return fail(logFailure("the server's audit verifier key changed: it serves %s, but this client trusts %s "+
				"(since %s, kept in %s), and its log records no change from that key. A key changes when the ledger's "+
				"FOUNDRY_AUDIT_SIGNING_KEY does; it is also what a server that rewrote its history would do. If the operator "+
				"confirms the new key, run again with --key %s",
				served, held.VerifierKey, held.KeyTrustedAt.UTC().Format(time.RFC3339), held.path, served))
		}
		// The old key signs nothing that covers its own change: a held
		// checkpoint that does was signed after the key was retired.
		if h := held.Checkpoint; h != nil && h.TreeSize > path[0].GetSeq() {
			return fail(logFailure("this client holds a checkpoint (%s) signed by %s that covers seq %d, where the log records "+
				"that key's change to %s: it was signed after the key was retired", h.describe(), held.VerifierKey,
				path[0].GetSeq(), path[0].GetToKey()))
		}
		followed = path
		rep.VerifierKey, rep.KeyTrust = served, "key_change"
		next.VerifierKey, next.KeyTrustedAt = served, now
	default:
		if served == "" {
			return fail(logFailure("the server serves no audit verifier key"))
		}
		rep.VerifierKey, rep.KeyTrust = served, "first_use"
		next.VerifierKey, next.KeyTrustedAt = served, now
	}
	verifier, err := note.NewVerifier(rep.VerifierKey)
	if err != nil {
		return fail(logFailure("the verifier key %q is not a note verifier key (<name>+<hash>+<key>): %v", rep.VerifierKey, err))
	}
	if held.Checkpoint != nil {
		rep.Previous = &previousReport{TreeSize: held.Checkpoint.TreeSize, RootHash: held.Checkpoint.RootHash,
			VerifiedAt: held.Checkpoint.VerifiedAt.UTC().Format(time.RFC3339)}
	}

	if ev.Note == "" {
		if held.Checkpoint != nil {
			return fail(logFailure("the server has no audit checkpoint, but this client verified one (%s): the log was "+
				"removed or rolled back", held.Checkpoint.describe()))
		}
		// Nothing sequenced yet: only the key is kept.
		rep.Valid = true
		return rep, &next, checkEntries(&rep, ev.Entries, 0, tlog.Hash{})
	}

	cp, bad := openCheckpoint(ev.Note, verifier)
	if bad != nil {
		return fail(bad)
	}
	if bad := checkCosigned(ev.Note, verifier, ev.Witnesses); bad != nil {
		return fail(bad)
	}
	rep.Witnesses = append(rep.Witnesses, ev.Witnesses...)
	rootText := base64.StdEncoding.EncodeToString(cp.root[:])
	rep.Origin, rep.TreeSize, rep.RootHash = &cp.origin, &cp.size, &rootText

	if h := held.Checkpoint; h != nil {
		oldRoot, err := h.root()
		if err != nil {
			return fail(logFailure("the checkpoint kept in %s is unreadable: %v", held.path, err))
		}
		if cp.size < h.TreeSize {
			return fail(logFailure("the audit log was rolled back: the server's checkpoint has tree size %d, but this client "+
				"verified one of %s", cp.size, h.describe()))
		}
		if err := checkConsistency(ev.Consistency, h.TreeSize, oldRoot, cp.size, cp.root); err != nil {
			return fail(logFailure("the audit log's history was rewritten since the checkpoint this client holds (%s): %v",
				h.describe(), err))
		}
		rep.Previous.Extended = true
	} else if err := checkConsistency(ev.Consistency, cp.size, cp.root, cp.size, cp.root); err != nil {
		return fail(logFailure("the audit log's stored history is not the one its checkpoint signed (tree size %d): %v",
			cp.size, err))
	}
	if bad := checkKeyChanges(followed, ev.KeyChangeProofs, cp.size, cp.root); bad != nil {
		return fail(bad)
	}
	for _, c := range followed {
		rep.KeyChanges = append(rep.KeyChanges, keyChangeReport{Seq: c.GetSeq(), From: c.GetFromKey(), To: c.GetToKey()})
	}
	next.Checkpoint = &heldCheckpoint{Note: ev.Note, TreeSize: cp.size, RootHash: rootText, VerifiedAt: now}
	rep.Valid = true
	return rep, &next, checkEntries(&rep, ev.Entries, cp.size, cp.root)
}

// checkEntries checks each entry's inclusion proof against the tree of
// size n with root, adding them to rep; a *logError names those that
// failed.
func checkEntries(rep *logReport, entries []entryEvidence, n int64, root tlog.Hash) error {
	var failed []string
	for _, e := range entries {
		r := entryReport{Seq: e.Seq}
		reason := checkEntry(e, n, root, &r)
		if reason == "" {
			r.Included = true
		} else {
			r.Reason = &reason
			failed = append(failed, fmt.Sprintf("audit entry %d: %s", e.Seq, reason))
		}
		rep.Entries = append(rep.Entries, r)
	}
	if len(failed) == 0 {
		return nil
	}
	msg := strings.Join(failed, "; ")
	rep.Valid, rep.Reason = false, &msg
	return &logError{msg}
}

// checkEntry checks one entry's proof, filling r's leaf hash, and says
// why it fails ("" when it is included).
func checkEntry(e entryEvidence, n int64, root tlog.Hash, r *entryReport) string {
	switch {
	case e.Seq < 1:
		return "not an entry's seq (entries are numbered from 1)"
	case e.Seq >= n:
		if n == 0 {
			return "the log has no checkpoint yet"
		}
		return fmt.Sprintf("not covered by the signed checkpoint (tree size %d covers seq 1 to %d): not sequenced yet, or no such entry",
			n, n-1)
	case e.Err != "":
		return "the server gave no proof: " + e.Err
	case e.Proof == nil:
		return "the server gave no proof"
	}
	p := e.Proof
	if p.GetSeq() != e.Seq || p.GetTreeSize() != n {
		return fmt.Sprintf("the server's proof is for seq %d in the tree of size %d, not seq %d in %d", p.GetSeq(), p.GetTreeSize(), e.Seq, n)
	}
	leaf, chainWhy, why := shownLeaf(e.Seq, p.GetEntry())
	if why != "" {
		return why
	}
	leafText := base64.StdEncoding.EncodeToString(leaf[:])
	r.LeafHash = &leafText
	if p.GetLeafHash() != leafText {
		return fmt.Sprintf("the server's leaf hash (%s) is not the hash of the entry it shows (%s)", p.GetLeafHash(), leafText)
	}
	proof, err := parseHashes(p.GetProof())
	if err != nil {
		return "the proof " + err.Error()
	}
	if tlog.CheckRecord(tlog.RecordProof(proof), n, root, e.Seq, leaf) != nil {
		return "not in the log as signed: the entry as the server shows it does not hash to the leaf the signed tree holds " +
			"(it was changed after it was sequenced)"
	}
	// In the signed tree as shown, but the chain hash shown beside it is
	// not that entry's: the hash columns were rewritten.
	return chainWhy
}

// shownLeaf recomputes, from the fields of the entry the server shows
// (as GET /api/audit lists it), the leaf its seq must hold in the signed
// tree; why says why it cannot ("" when it can). The shown amount must be
// its micro-units; chainWhy says that the shown hash does not cover the
// fields after the shown prev_hash ("" when it does): an answer whose
// parts disagree shows nothing a proof could vouch for.
func shownLeaf(seq int64, en *ledgerv1.AuditEntry) (leaf tlog.Hash, chainWhy, why string) {
	if en == nil {
		return tlog.Hash{}, "", "the server's proof shows no entry"
	}
	at, err := time.Parse(time.RFC3339Nano, en.GetCreatedAt())
	if err != nil {
		return tlog.Hash{}, "", fmt.Sprintf("the entry's created_at %q is not an RFC 3339 time", en.GetCreatedAt())
	}
	amount, err := strconv.ParseInt(en.GetAmountMicros(), 10, 64)
	if err != nil {
		return tlog.Hash{}, "", fmt.Sprintf("the entry's amount_micros %q is not a whole number", en.GetAmountMicros())
	}
	if float64(amount)/1e6 != en.GetAmount() {
		return tlog.Hash{}, "", fmt.Sprintf("the entry's amount (%v) is not its amount_micros (%d) in whole units", en.GetAmount(), amount)
	}
	e := auditlog.Entry{Seq: en.GetSeq(), Kind: en.GetKind(), At: at, Actor: en.GetActor(), Subject: en.GetSubject(),
		Amount: amount, Attrs: en.GetAttrs()}
	if e.Seq != seq {
		return tlog.Hash{}, "", fmt.Sprintf("the server's proof shows the entry with seq %d", e.Seq)
	}
	prev, perr := hex.DecodeString(en.GetPrevHash())
	hash, herr := hex.DecodeString(en.GetHash())
	if perr != nil || herr != nil || len(prev) != sha256.Size || len(hash) != sha256.Size {
		return tlog.Hash{}, "", "the entry's prev_hash or hash is not hex SHA-256"
	}
	if chained := auditlog.ChainHash([32]byte(prev), e); !bytes.Equal(chained[:], hash) {
		chainWhy = "the entry's hash does not cover the entry shown after its prev_hash"
	}
	return auditlog.Leaf(e), chainWhy, ""
}

// checkConsistency checks the server's proof that the tree of size old
// with root oldRoot is a prefix of the tree of size n with root newRoot
// (the signed and held roots), and that the roots the server computed
// from its stored tree are those.
func checkConsistency(c *ledgerv1.GetAuditConsistencyResponse, old int64, oldRoot tlog.Hash, n int64, newRoot tlog.Hash) error {
	if c == nil {
		return errors.New("the server gave no consistency proof")
	}
	if c.GetFrom() != old || c.GetTo() != n {
		return fmt.Errorf("the server's consistency proof is from tree size %d to %d, not %d to %d", c.GetFrom(), c.GetTo(), old, n)
	}
	proof, err := parseHashes(c.GetProof())
	if err != nil {
		return fmt.Errorf("the consistency proof %w", err)
	}
	if old == n && oldRoot != newRoot {
		return fmt.Errorf("the server's signed checkpoint of that tree size has another root (%s, held %s)",
			base64.StdEncoding.EncodeToString(newRoot[:]), base64.StdEncoding.EncodeToString(oldRoot[:]))
	}
	if err := tlog.CheckTree(tlog.TreeProof(proof), n, newRoot, old, oldRoot); err != nil {
		return fmt.Errorf("the tree of size %d does not extend it (%w)", n, err)
	}
	// The proof can leave the old tree out (a tree of a power-of-two size
	// is taken from the client): the roots the server computed say whether
	// its stored tree is still the signed one.
	if stored, err := parseRoot(c.GetOldRoot()); err != nil || stored != oldRoot {
		return fmt.Errorf("the server's stored tree of size %d no longer hashes to the root it had (%s, now %s)",
			old, base64.StdEncoding.EncodeToString(oldRoot[:]), c.GetOldRoot())
	}
	if stored, err := parseRoot(c.GetNewRoot()); err != nil || stored != newRoot {
		return fmt.Errorf("the server's stored tree of size %d does not hash to its signed root (%s, stored %s)",
			n, base64.StdEncoding.EncodeToString(newRoot[:]), c.GetNewRoot())
	}
	return nil
}

// checkpoint is a verified checkpoint's body.
type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
}

// openCheckpoint verifies a signed checkpoint with verifier and reads it:
// the origin line (which must be the key's name), the tree size and the
// root hash in standard base64 (C2SP checkpoints; extension lines are
// ignored).
func openCheckpoint(signed string, verifier note.Verifier) (checkpoint, *logError) {
	n, err := note.Open([]byte(signed), note.VerifierList(verifier))
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return checkpoint{}, logFailure("the audit checkpoint is not signed by the trusted key %s (signed by %s)",
			keyName(verifier), signers(unverified.Note))
	case errors.As(err, &invalid):
		return checkpoint{}, logFailure("the audit checkpoint's signature by %s does not verify: the checkpoint was forged or altered",
			keyName(verifier))
	case err != nil:
		return checkpoint{}, logFailure("the audit checkpoint is not a signed note: %v", err)
	}
	c, perr := parseCheckpoint(n.Text)
	if perr != nil {
		return checkpoint{}, logFailure("the audit checkpoint is malformed: %v", perr)
	}
	if c.origin != verifier.Name() {
		return checkpoint{}, logFailure("the audit checkpoint's origin %q is not the key's name %q", c.origin, verifier.Name())
	}
	return c, nil
}

// checkCosigned checks that the signed checkpoint carries a valid
// cosignature (C2SP tlog-cosignature) by each witness: each cosigned it
// only after checking that it extends the last checkpoint it cosigned for
// the log, so a checkpoint they all cosigned is one history, whatever the
// log shows anyone else. A cosignature missing or not verifying is a
// failure: the checkpoint may be a fork shown to this client alone.
func checkCosigned(signed string, log note.Verifier, witnesses []string) *logError {
	if len(witnesses) == 0 {
		return nil
	}
	vs := []note.Verifier{log}
	for _, w := range witnesses {
		v, err := fnote.NewVerifierForCosignatureV1(w)
		if err != nil {
			return logFailure("--witness %q is not a witness's verifier key: %v", w, err)
		}
		vs = append(vs, v)
	}
	n, err := note.Open([]byte(signed), note.VerifierList(vs...))
	if err != nil {
		return logFailure("the audit checkpoint's signatures do not verify: %v", err)
	}
	for _, v := range vs[1:] {
		if !slices.ContainsFunc(n.Sigs, func(s note.Signature) bool { return s.Name == v.Name() && s.Hash == v.KeyHash() }) {
			return logFailure("the audit checkpoint is not cosigned by the witness %s: it may be a history shown to this client "+
				"alone; a witness cosigns only a checkpoint that extends the last one it saw", keyName(v))
		}
	}
	return nil
}

// parseCheckpoint reads a checkpoint's body, unverified: audit verify
// reads the size before it asks for proofs, and verifyLog verifies it.
func parseCheckpoint(text string) (checkpoint, error) {
	lines := strings.Split(text, "\n")
	if len(lines) < 4 || !strings.HasSuffix(text, "\n") {
		return checkpoint{}, errors.New("want an origin line, a tree size and a root hash, each ending in a newline")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if lines[0] == "" || err != nil || size < 1 || strconv.FormatInt(size, 10) != lines[1] {
		return checkpoint{}, errors.New("want a non-empty origin and a decimal tree size of at least 1")
	}
	root, err := parseRoot(lines[2])
	if err != nil {
		return checkpoint{}, fmt.Errorf("the root hash %w", err)
	}
	return checkpoint{origin: lines[0], size: size, root: root}, nil
}

// noteText is a signed note's text, before the blank line that opens its
// signatures ("" when there is none).
func noteText(signed string) string {
	i := strings.LastIndex(signed, "\n\n")
	if i < 0 {
		return ""
	}
	return signed[:i+1]
}

// parseRoot reads a hash in standard base64, as checkpoints and proofs
// write them.
func parseRoot(s string) (tlog.Hash, error) {
	var h tlog.Hash
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw) != len(h) {
		return h, fmt.Errorf("%q is not 32 bytes of standard base64", s)
	}
	copy(h[:], raw)
	return h, nil
}

func parseHashes(list []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(list))
	for i, s := range list {
		h, err := parseRoot(s)
		if err != nil {
			return nil, fmt.Errorf("hash %d: %w", i, err)
		}
		out[i] = h
	}
	return out, nil
}

// keyName names a verifier in messages: name and key hash, as a
// signature line carries them.
func keyName(v note.Verifier) string { return fmt.Sprintf("%s (key hash %08x)", v.Name(), v.KeyHash()) }

// signers names who signed a note the client could not verify.
func signers(n *note.Note) string {
	if n == nil || len(n.UnverifiedSigs) == 0 {
		return "nobody"
	}
	names := make([]string, len(n.UnverifiedSigs))
	for i, s := range n.UnverifiedSigs {
		names[i] = fmt.Sprintf("%s (key hash %08x)", s.Name, s.Hash)
	}
	return strings.Join(names, ", ")
}

// --- the state's file ----------------------------------------------------------------

// auditStateDir is where audit verify keeps what it trusts: beside the
// default config file, $XDG_CONFIG_HOME/foundry/audit, else
// ~/.config/foundry/audit ("" when neither variable is set).
func auditStateDir(getenv func(string) string) string {
	p := defaultConfigPath(getenv)
	if p == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "audit")
}

// auditStateFile is the file of server's state in dir: the server's
// address made a file name, and a hash of it so that two addresses never
// share one (http_127.0.0.1_8080-1a2b3c4d.json).
func auditStateFile(dir, server string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, strings.Replace(server, "://", "_", 1))
	if len(name) > 80 {
		name = name[:80]
	}
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:4])+".json")
}

// loadAuditState reads server's state from path; the zero state (with
// its server and path) when there is none yet.
func loadAuditState(path, server string) (auditState, error) {
	st := auditState{Server: server, path: path}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("%s is not the state audit verify keeps (%v): move it away to start over, "+
			"trusting the server's key again", path, err)
	}
	st.path = path
	if st.Server != server {
		return st, fmt.Errorf("%s is the state of %s, not of %s", path, st.Server, server)
	}
	if c := st.Checkpoint; c != nil {
		if _, err := c.root(); err != nil || c.TreeSize < 1 {
			return st, fmt.Errorf("%s holds an unreadable checkpoint: move it away to start over, trusting the server's key again", path)
		}
	}
	return st, nil
}

// save writes the state atomically (a temporary file renamed over the
// old one), readable by the user alone.
func (st *auditState) save() error {
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(st.path, append(raw, '\n')); err != nil {
		return fmt.Errorf("keep the audit log's state in %s: %w", st.path, err)
	}
	return nil
}
