package e2e_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// The audit log as a client outside the ledger checks it, through real
// HTTP: the signed checkpoint and the key that verifies it, inclusion
// proofs of entries, consistency proofs between two checkpoints, and the
// administrator's full verification. Every check of a proof is
// golang.org/x/mod/sumdb/tlog's, of a signature golang.org/x/mod/sumdb/note's:
// nothing here trusts the ledger's own verdict.

// auditGenesisRecord is record 0 of every log's tree (tlog counts records
// from 0, the chain from 1), so that record n is the entry with seq n. It
// is part of the log's format: a ledger that changed it would no longer
// prove its own older checkpoints.
const auditGenesisRecord = "foundry audit log v1\n"

// newAuditKey makes a checkpoint signing key and its verifier key in the
// signed-note format, as FOUNDRY_AUDIT_SIGNING_KEY (the -audit-signing-key
// flag) takes it.
func newAuditKey(t *testing.T, name string) (skey, vkey string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	require.NoError(t, err)
	return skey, vkey
}

// auditLogVerify is GET /api/audit/verify.
type auditLogVerify struct {
	Valid          bool    `json:"valid"`
	EntriesChecked int     `json:"entries_checked"`
	LastVerified   *int    `json:"last_verified_seq"`
	FirstDivergent *int    `json:"first_divergent_seq"`
	Reason         string  `json:"reason"`
	FromSeq        int     `json:"verified_from_seq"`
	TreeSize       int64   `json:"tree_size"`
	RootHash       string  `json:"root_hash"`
	Full           bool    `json:"full"`
	Unsequenced    int     `json:"unsequenced_entries"`
	UnsequencedAge float64 `json:"unsequenced_age_seconds"`
	// Scrub is the scrubber's progress (nil while it is off).
	Scrub *struct {
		LastCycle *struct {
			Cycle      int `json:"cycle"`
			ThroughSeq int `json:"through_seq"`
			Findings   int `json:"findings"`
		} `json:"last_cycle"`
	} `json:"scrub"`
	Repaired []struct {
		RepairSeq int    `json:"repair_seq"`
		FromSeq   int    `json:"from_seq"`
		ToSeq     int    `json:"to_seq"`
		Reason    string `json:"reason"`
	} `json:"repaired_breaks"`
}

// auditVerify is GET /api/audit/verify: incremental (from where the last
// sound verification stopped, for anyone) or, with full, from the first
// entry (the administrator's). It checks what every answer holds: the
// kind of walk asked for, where it started, and for a sound log that it
// walked from there to the checkpoint's last entry.
func auditVerify(t *testing.T, sys auditTarget, full bool) auditLogVerify {
	t.Helper()
	path, headers := "/api/audit/verify", []string(nil)
	if full {
		path, headers = path+"?full=true", []string{asAdmin}
	}
	r := request(t, http.MethodGet, sys.URL(path), nil, headers...)
	requireStatus(t, http.StatusOK, r)
	var v auditLogVerify
	require.NoError(t, json.Unmarshal(r.Raw, &v), "%s", r.Raw)
	require.NotNil(t, v.Repaired, "repaired_breaks is a list: %s", r.Raw)
	require.Equal(t, full, v.Full, "%s", r.Raw)
	if full || v.TreeSize == 0 {
		require.Equal(t, 1, v.FromSeq, "a full walk starts at the first entry: %s", r.Raw)
	} else {
		require.GreaterOrEqual(t, v.FromSeq, 1, "%s", r.Raw)
		require.LessOrEqual(t, int64(v.FromSeq), v.TreeSize, "an incremental walk starts within the checkpoint: %s", r.Raw)
	}
	switch span := v.TreeSize - int64(v.FromSeq); {
	case v.Valid && v.TreeSize > 0 && len(v.Repaired) == 0:
		require.Equal(t, span, int64(v.EntriesChecked),
			"the walk covers every entry from where it started to the checkpoint's last: %s", r.Raw)
	case v.Valid && v.TreeSize > 0:
		// A repaired break of deleted entries has no rows to walk.
		require.LessOrEqual(t, int64(v.EntriesChecked), span, "%s", r.Raw)
	}
	return v
}

// auditCheckpoint is a signed checkpoint as a client reads it: opened with
// the verifier key it trusts.
type auditCheckpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
	// Note is the signed note as served.
	Note string
}

// auditReadCheckpoint fetches GET /api/audit/checkpoint, checks its
// signature with vkey (note.Open) and parses the checkpoint's body: the
// origin (the key's name), the tree size and the root hash.
func auditReadCheckpoint(t *testing.T, sys auditTarget, vkey string) auditCheckpoint {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/audit/checkpoint"), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Equal(t, "text/plain; charset=utf-8", r.Header.Get("Content-Type"))
	return auditOpenCheckpoint(t, string(r.Raw), vkey)
}

func auditOpenCheckpoint(t *testing.T, signed, vkey string) auditCheckpoint {
	t.Helper()
	v, err := note.NewVerifier(vkey)
	require.NoError(t, err, "verifier key %q", vkey)
	n, err := note.Open([]byte(signed), note.VerifierList(v))
	require.NoError(t, err, "the checkpoint's signature verifies with %s:\n%s", vkey, signed)
	require.Len(t, n.Sigs, 1, "one signature, the ledger's:\n%s", signed)
	require.Equal(t, v.Name(), n.Sigs[0].Name)
	require.Equal(t, v.KeyHash(), n.Sigs[0].Hash)
	lines := strings.Split(n.Text, "\n")
	require.Len(t, lines, 4, "origin, tree size, root hash, each ending in a newline:\n%s", n.Text)
	require.Empty(t, lines[3])
	c := auditCheckpoint{Origin: lines[0], Note: signed}
	require.Equal(t, v.Name(), c.Origin, "the origin is the key's name")
	c.Size, err = strconv.ParseInt(lines[1], 10, 64)
	require.NoError(t, err, "tree size %q", lines[1])
	require.Positive(t, c.Size)
	c.Root = auditHash(t, lines[2])
	return c
}

// auditHash decodes a hash as the log writes it: standard base64 of 32 bytes.
func auditHash(t *testing.T, s string) tlog.Hash {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err, "hash %q is standard base64", s)
	var h tlog.Hash
	require.Len(t, b, len(h), "hash %q", s)
	copy(h[:], b)
	return h
}

func auditHashes(t *testing.T, v any) []tlog.Hash {
	t.Helper()
	list, ok := v.([]any)
	require.True(t, ok, "a list of hashes: %v", v)
	out := make([]tlog.Hash, len(list))
	for i, s := range list {
		out[i] = auditHash(t, s.(string))
	}
	return out
}

// auditVerifierKey is GET /api/audit/verifier-key: the key, without the
// newline that ends the text.
func auditVerifierKey(t *testing.T, sys auditTarget) string {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/audit/verifier-key"), nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Equal(t, "text/plain; charset=utf-8", r.Header.Get("Content-Type"))
	key, ok := strings.CutSuffix(string(r.Raw), "\n")
	require.True(t, ok, "the key ends in a newline: %q", r.Raw)
	require.NotContains(t, key, "\n")
	return key
}

// auditProve fetches the inclusion proof of record seq in the tree of
// size c.Size and checks it (tlog.CheckRecord) against c's signed root,
// for the leaf hash the ledger gives; it returns that leaf hash.
func auditProve(t *testing.T, sys auditTarget, c auditCheckpoint, seq int64) tlog.Hash {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/entries/%d/proof?tree_size=%d", seq, c.Size)), nil)
	requireStatus(t, http.StatusOK, r)
	require.Equal(t, float64(seq), r.JSON["seq"], "%s", r.Raw)
	require.Equal(t, float64(c.Size), r.JSON["tree_size"], "%s", r.Raw)
	leaf := auditHash(t, r.JSON["leaf_hash"].(string))
	proof := tlog.RecordProof(auditHashes(t, r.JSON["proof"]))
	require.NoError(t, tlog.CheckRecord(proof, c.Size, c.Root, seq, leaf), "record %d in the tree of %d: %s", seq, c.Size, r.Raw)
	return leaf
}

// auditConsistent fetches the consistency proof from old's tree to new's
// and checks it (tlog.CheckTree) against both signed roots.
func auditConsistent(t *testing.T, sys auditTarget, old, new auditCheckpoint) {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/consistency?from=%d&to=%d", old.Size, new.Size)), nil)
	requireStatus(t, http.StatusOK, r)
	require.Equal(t, float64(old.Size), r.JSON["from"], "%s", r.Raw)
	require.Equal(t, float64(new.Size), r.JSON["to"], "%s", r.Raw)
	require.Equal(t, old.Root, auditHash(t, r.JSON["old_root"].(string)), "the old tree's root is the one the earlier checkpoint signed")
	require.Equal(t, new.Root, auditHash(t, r.JSON["new_root"].(string)), "the new tree's root is the one the latest checkpoint signed")
	proof := tlog.TreeProof(auditHashes(t, r.JSON["proof"]))
	require.NoError(t, tlog.CheckTree(proof, new.Size, new.Root, old.Size, old.Root),
		"the tree of %d is a prefix of the tree of %d: %s", old.Size, new.Size, r.Raw)
}

// auditEntryAt is the entry with seq in GET /api/audit (newest first).
func auditEntryAt(t *testing.T, sys *allinonetest.System, seq int) creditAuditEntry {
	t.Helper()
	entries, total := creditAudit(t, sys)
	require.LessOrEqual(t, seq, total)
	e := entries[total-seq]
	require.Equal(t, seq, e.Seq)
	return e
}

// TestAuditLogProofs: after movements, a client fetches the signed
// checkpoint and the verifier key, opens the checkpoint with
// golang.org/x/mod/sumdb/note and checks inclusion proofs of entries and a
// consistency proof from an earlier checkpoint with tlog, against the
// signed roots; a proof past the tree is a 404 and a tree past the latest
// checkpoint a 422; the full verification is the administrator's.
func TestAuditLogProofs(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		vkey := auditVerifierKey(t, sys)
		verifier, err := note.NewVerifier(vkey)
		require.NoError(t, err, "GET /api/audit/verifier-key is a note verifier key: %q", vkey)

		t.Run("before any movement the log holds the genesis record alone", func(t *testing.T) {
			// The sequencer signs it at startup.
			var genesis auditCheckpoint
			require.Eventually(t, func() bool {
				r := request(t, http.MethodGet, sys.URL("/api/audit/checkpoint"), nil)
				if r.Status == http.StatusNotFound {
					return false
				}
				genesis = auditReadCheckpoint(t, sys, vkey)
				return true
			}, 10*time.Second, 20*time.Millisecond, "the first checkpoint is signed")
			require.Equal(t, int64(1), genesis.Size, "%s", genesis.Note)
			require.Equal(t, tlog.RecordHash([]byte(auditGenesisRecord)), genesis.Root, "a tree of one record: its leaf hash")
			require.Equal(t, genesis.Root, auditProve(t, sys, genesis, 0))
			requireCreditDetail(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/audit/entries/1/proof"), nil),
				"record 1 is not in the tree of size 1")
			v := auditVerify(t, sys, false)
			require.True(t, v.Valid, "%+v", v)
			require.Equal(t, int64(1), v.TreeSize)
			require.Equal(t, genesis.Root, auditHash(t, v.RootHash))
			require.Zero(t, v.EntriesChecked)
			require.Zero(t, v.Unsequenced)
		})

		ada := creditRegister(t, sys, "ada")
		idea := creditIdea(t, sys, "merkle lamp")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-1"))
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 100}, ada.auth()))
		waitSequenced(t, sys)

		// The first checkpoint: the genesis record, the deposit, its spread
		// fee and the stake.
		first := auditReadCheckpoint(t, sys, vkey)
		require.Equal(t, verifier.Name(), first.Origin)
		require.Equal(t, int64(4), first.Size, "the genesis record and three entries:\n%s", first.Note)
		v := auditVerify(t, sys, false)
		require.True(t, v.Valid, "%+v", v)
		require.Equal(t, first.Size, v.TreeSize, "verified against the latest checkpoint")
		require.Equal(t, first.Root, auditHash(t, v.RootHash), "root_hash is the signed root")
		require.Zero(t, v.Unsequenced)
		require.Zero(t, v.UnsequencedAge)

		for range 3 {
			requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
				map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 10}, ada.auth()))
		}
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 5, "wire-2"))
		requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
			map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 30}, ada.auth()))
		waitSequenced(t, sys)
		latest := auditReadCheckpoint(t, sys, vkey)
		require.Equal(t, first.Size+6, latest.Size, "three stakes, a deposit and its fee, an unstake:\n%s", latest.Note)
		_, total := creditAudit(t, sys)
		require.Equal(t, latest.Size-1, int64(total), "the checkpoint covers every entry the list shows")

		t.Run("inclusion: every record proves against the signed roots", func(t *testing.T) {
			leaves := map[int64]tlog.Hash{}
			for seq := range latest.Size {
				leaves[seq] = auditProve(t, sys, latest, seq)
			}
			require.Equal(t, tlog.RecordHash([]byte(auditGenesisRecord)), leaves[0], "record 0 is the genesis record")
			for seq := range first.Size {
				require.Equal(t, leaves[seq], auditProve(t, sys, first, seq), "record %d is the same leaf in the earlier tree", seq)
			}
			distinct := map[tlog.Hash]bool{}
			for _, h := range leaves {
				distinct[h] = true
			}
			require.Len(t, distinct, int(latest.Size), "each record is a leaf of its own")

			// The checks are real: another record's leaf, or another root,
			// does not prove.
			r := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/entries/2/proof?tree_size=%d", latest.Size)), nil)
			requireStatus(t, http.StatusOK, r)
			proof := tlog.RecordProof(auditHashes(t, r.JSON["proof"]))
			require.Error(t, tlog.CheckRecord(proof, latest.Size, latest.Root, 2, leaves[3]))
			require.Error(t, tlog.CheckRecord(proof, latest.Size, first.Root, 2, leaves[2]))

			// Without tree_size: the latest checkpoint's tree.
			r = request(t, http.MethodGet, sys.URL("/api/audit/entries/1/proof"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, float64(latest.Size), r.JSON["tree_size"], "%s", r.Raw)
			require.NoError(t, tlog.CheckRecord(tlog.RecordProof(auditHashes(t, r.JSON["proof"])), latest.Size, latest.Root, 1,
				auditHash(t, r.JSON["leaf_hash"].(string))))
		})

		t.Run("a history event's audit_seq names its entry, which the log proves", func(t *testing.T) {
			events := creditHistory(t, sys, ada.ID)
			require.Equal(t, "unstake", events[0]["kind"])
			seq := int(events[0]["audit_seq"].(float64))
			e := auditEntryAt(t, sys, seq)
			require.Equal(t, "unstake", e.Kind)
			require.Equal(t, events[0]["id"], e.Attrs["entry_id"], "the audit entry records the journal entry")
			auditProve(t, sys, latest, int64(seq))
		})

		t.Run("a record past the tree is a 404, a tree past the latest checkpoint a 422", func(t *testing.T) {
			requireCreditDetail(t, http.StatusNotFound,
				request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/entries/%d/proof", latest.Size)), nil),
				fmt.Sprintf("record %d is not in the tree of size %d", latest.Size, latest.Size))
			requireCreditDetail(t, http.StatusNotFound,
				request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/entries/%d/proof?tree_size=%d", first.Size, first.Size)), nil),
				fmt.Sprintf("record %d is not in the tree of size %d", first.Size, first.Size))
			for _, size := range []int64{latest.Size + 1, latest.Size + 1000} {
				r := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/entries/1/proof?tree_size=%d", size)), nil)
				requireFieldError(t, r, "tree_size")
				require.Contains(t, r.JSON["detail"], fmt.Sprintf("from 1 to %d", latest.Size), "%s", r.Raw)
			}
		})

		t.Run("consistency: the earlier signed tree is a prefix of the latest", func(t *testing.T) {
			auditConsistent(t, sys, first, latest)
			auditConsistent(t, sys, latest, latest)

			// Without to: the latest checkpoint's tree.
			r := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/consistency?from=%d", first.Size)), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, float64(latest.Size), r.JSON["to"], "%s", r.Raw)
			require.Equal(t, latest.Root, auditHash(t, r.JSON["new_root"].(string)))

			// The check is real: the proof does not hold for another old root.
			r = request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/consistency?from=%d&to=%d", first.Size, latest.Size)), nil)
			requireStatus(t, http.StatusOK, r)
			require.Error(t, tlog.CheckTree(tlog.TreeProof(auditHashes(t, r.JSON["proof"])), latest.Size, latest.Root, first.Size, latest.Root))

			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/audit/consistency"), nil), "from")
			requireFieldError(t, request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/consistency?from=%d", latest.Size+1)), nil), "from")
			requireFieldError(t, request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/audit/consistency?from=1&to=%d", latest.Size+1)), nil), "to")
		})

		t.Run("full verification is the administrator's", func(t *testing.T) {
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodGet, sys.URL("/api/audit/verify?full=true"), nil, anonymous))
			viewer := authzCreateToken(t, sys, "log-viewer", "viewer")
			requireStatus(t, http.StatusForbidden, request(t, http.MethodGet, sys.URL("/api/audit/verify?full=true"), nil, viewer.auth()))
			requireStatus(t, http.StatusForbidden, request(t, http.MethodGet, sys.URL("/api/audit/verify?full=true"), nil, ada.auth()))
			// Not asking for it is everyone's.
			r := request(t, http.MethodGet, sys.URL("/api/audit/verify?full=false"), nil, viewer.auth())
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, false, r.JSON["full"])

			v := auditVerify(t, sys, true)
			require.True(t, v.Valid, "%+v", v)
			require.Equal(t, latest.Size-1, int64(v.EntriesChecked), "every entry, from the first")
			require.Equal(t, latest.Size, v.TreeSize)
			require.Equal(t, latest.Root, auditHash(t, v.RootHash))
			require.Nil(t, v.FirstDivergent)
			require.Empty(t, v.Reason)
		})

		t.Run("an incremental verification walks only what was sequenced since the last", func(t *testing.T) {
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
				map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 1}, ada.auth()))
			waitSequenced(t, sys)
			grown := auditReadCheckpoint(t, sys, vkey)
			require.Equal(t, latest.Size+1, grown.Size)
			auditConsistent(t, sys, latest, grown)
			v := auditVerify(t, sys, false)
			require.True(t, v.Valid, "%+v", v)
			require.Equal(t, grown.Size, v.TreeSize)
			require.Greater(t, v.FromSeq, 1, "it resumes after the last verified checkpoint: %+v", v)
			require.Less(t, v.EntriesChecked, int(grown.Size-1), "not the whole log: %+v", v)
		})
	}, creditFlags...)
}

// TestAuditLogTextRoutesNeedACredential: the checkpoint and the verifier
// key, which the gateway serves as text itself, are reads like GET
// /api/audit: with FOUNDRY_PUBLIC_READS=false an anonymous caller and a
// credential that does not verify are refused (401, as JSON with a
// detail), and a viewer is served.
func TestAuditLogTextRoutesNeedACredential(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		viewer := authzCreateToken(t, sys, "log-viewer", "viewer")
		revoked := authzCreateToken(t, sys, "log-revoked", "viewer")
		requireStatus(t, http.StatusOK, request(t, http.MethodDelete, sys.URL("/api/tokens/"+revoked.ID), nil, asAdmin))
		require.Eventually(t, func() bool {
			return request(t, http.MethodGet, sys.URL("/api/audit/checkpoint"), nil, viewer.auth()).Status == http.StatusOK
		}, 10*time.Second, 20*time.Millisecond, "the first checkpoint is signed")

		for _, path := range []string{"/api/audit", "/api/audit/checkpoint", "/api/audit/verifier-key"} {
			requireStatus(t, http.StatusUnauthorized, request(t, http.MethodGet, sys.URL(path), nil, anonymous))
			r := request(t, http.MethodGet, sys.URL(path), nil, revoked.auth())
			requireStatus(t, http.StatusUnauthorized, r)
			require.Equal(t, "token revoked", r.JSON["detail"], "%s: %s", path, r.Raw)
			requireStatus(t, http.StatusOK, request(t, http.MethodGet, sys.URL(path), nil, viewer.auth()))
		}
	}, "-public-reads=false")
}
