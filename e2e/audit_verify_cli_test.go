package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/cli"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// foundry audit verify against a whole Foundry, whose ledger database is
// then rewritten as an attacker with write access to it would: one old
// audit entry changed and every later chain hash recomputed, so that the
// hash chain verifies again; with the Merkle tree rebuilt from the
// rewritten entries, or not; and, for an attacker who also holds the
// ledger's signing key, a new checkpoint signed over the rewritten tree.
// A client that holds an earlier checkpoint must catch each.

// auditCLIRun is one run of the foundry client, in process.
type auditCLIRun struct {
	code           int
	stdout, stderr string
}

func auditCLIExec(env map[string]string, args ...string) auditCLIRun {
	var out, errOut bytes.Buffer
	code := cli.Execute(context.Background(), args, nil, &out, &errOut, func(k string) string { return env[k] })
	return auditCLIRun{code: code, stdout: out.String(), stderr: errOut.String()}
}

// auditCLIVerify runs audit verify --json and decodes its answer.
func auditCLIVerify(t *testing.T, env map[string]string, args ...string) (auditCLIRun, map[string]any) {
	t.Helper()
	r := auditCLIExec(env, append([]string{"audit", "verify", "--json"}, args...)...)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	return r, doc
}

// auditCLIFound waits until the ledger has recorded an integrity finding
// at seq (its scrubber steps at startup and every few seconds).
func auditCLIFound(t *testing.T, sys *allinonetest.System, seq int) {
	t.Helper()
	require.Eventually(t, func() bool {
		v := auditVerify(t, sys, false)
		return !v.Valid && v.FirstDivergent != nil && *v.FirstDivergent == seq
	}, 30*time.Second, 100*time.Millisecond, "the scrubber finds seq %d", seq)
}

// auditCLISequenced waits until the sequencer has signed every movement's
// audit entry into the log, and returns the latest checkpoint's size. The
// answer must be the same twice: one verification reads the checkpoint
// before the backlog, so a batch that commits between the two reads shows
// the old size with no backlog.
func auditCLISequenced(t *testing.T, sys *allinonetest.System) int64 {
	t.Helper()
	size := int64(-1)
	require.Eventually(t, func() bool {
		r := request(t, http.MethodGet, sys.URL("/api/audit/verify"), nil)
		n, _ := r.JSON["unsequenced_entries"].(float64)
		s, _ := r.JSON["tree_size"].(float64)
		if r.Status != http.StatusOK || n != 0 || s == 0 {
			size = -1
			return false
		}
		done := int64(s) == size
		size = int64(s)
		return done
	}, 10*time.Second, 20*time.Millisecond)
	return size
}

// auditCLIRow is an audit entry as the ledger stores it.
type auditCLIRow struct {
	seq        int64
	encoded    []byte
	prev, hash [32]byte
}

// auditCLILedgerDB opens the ledger's database of a stopped system.
func auditCLILedgerDB(t *testing.T, sys *allinonetest.System) *database.DB {
	t.Helper()
	cfg := database.Config{DataDir: sys.Storage.DataDir, Schema: "ledger"}
	if sys.Storage.Engine == database.Postgres {
		cfg = database.Config{URL: sys.Storage.DatabaseURL, Schema: "ledger"}
	}
	db, err := database.Open(context.Background(), cfg)
	require.NoError(t, err)
	return db
}

func auditCLIRows(t *testing.T, db *database.DB) []auditCLIRow {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT seq, encoded, prev_hash, hash FROM audit_entries ORDER BY seq`)
	require.NoError(t, err)
	defer rows.Close()
	var out []auditCLIRow
	for rows.Next() {
		var (
			r               auditCLIRow
			enc, prev, hash string
		)
		require.NoError(t, rows.Scan(&r.seq, &enc, &prev, &hash))
		r.encoded = auditCLIUnhex(t, enc)
		if prev != "" {
			copy(r.prev[:], auditCLIUnhex(t, prev))
		}
		copy(r.hash[:], auditCLIUnhex(t, hash))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

func auditCLIUnhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err, s)
	return b
}

// auditCLIRewriteAmount changes the amount of a canonically encoded entry ("FAE1",
// then length-prefixed fields: seq, kind, at, actor, subject, amount, ...;
// services/ledger/internal/audit/encoding.go) to amount.
func auditCLIRewriteAmount(t *testing.T, enc []byte, amount int64) []byte {
	t.Helper()
	require.Equal(t, "FAE1", string(enc[:4]))
	out := append([]byte(nil), enc[:4]...)
	rest := enc[4:]
	for i := 0; len(rest) > 0; i++ {
		n, w := binary.Uvarint(rest)
		require.Positive(t, w)
		field := rest[w : w+int(n)]
		rest = rest[w+int(n):]
		if i == 5 {
			field = []byte(strconv.FormatInt(amount, 10))
		}
		out = binary.AppendUvarint(out, uint64(len(field)))
		out = append(out, field...)
	}
	return out
}

// auditCLIChainHash is SHA-256(prev ‖ encoded) (services/ledger/internal/audit/chain.go).
func auditCLIChainHash(prev [32]byte, encoded []byte) [32]byte {
	return sha256.Sum256(append(prev[:], encoded...))
}

// auditCLITamper says how far the rewrite goes.
type auditCLITamper struct {
	// rebuildTree rebuilds the Merkle tree from the rewritten entries
	// (record 0, the genesis record, kept).
	rebuildTree bool
	// resignWith signs a checkpoint over the rebuilt tree with this key,
	// as the ledger's latest and verified checkpoints ("": none).
	resignWith string
}

// auditCLIRewrite rewrites the amount of entry seq in the ledger's
// database of the stopped system and every later chain hash, as tamper
// says.
func auditCLIRewrite(t *testing.T, sys *allinonetest.System, seq int64, tamper auditCLITamper) {
	t.Helper()
	ctx := context.Background()
	db := auditCLILedgerDB(t, sys)
	defer db.Close()
	entries := auditCLIRows(t, db)
	require.Greater(t, int64(len(entries)), seq)
	for i := range entries {
		r := &entries[i]
		require.Equal(t, int64(i+1), r.seq)
		switch {
		case r.seq == seq:
			r.encoded = auditCLIRewriteAmount(t, r.encoded, 1)
			r.hash = auditCLIChainHash(r.prev, r.encoded)
			n, err := db.Exec(ctx, `UPDATE audit_entries SET amount = 1, encoded = $1, hash = $2 WHERE seq = $3`,
				hex.EncodeToString(r.encoded), hex.EncodeToString(r.hash[:]), r.seq)
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
		case r.seq > seq:
			r.prev = entries[i-1].hash
			r.hash = auditCLIChainHash(r.prev, r.encoded)
			n, err := db.Exec(ctx, `UPDATE audit_entries SET prev_hash = $1, hash = $2 WHERE seq = $3`,
				hex.EncodeToString(r.prev[:]), hex.EncodeToString(r.hash[:]), r.seq)
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
		}
	}
	last := entries[len(entries)-1]
	n, err := db.Exec(ctx, `UPDATE economy SET audit_head = $1 WHERE audit_seq = $2`, hex.EncodeToString(last.hash[:]), last.seq)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	if !tamper.rebuildTree {
		return
	}

	// The tree: tlog's stored hashes of the records, record 0 the genesis
	// record (its stored leaf hash copied), record n the entry with seq n.
	var genesisHex string
	require.NoError(t, db.QueryRow(ctx, `SELECT hash FROM audit_tree WHERE idx = 0`).Scan(&genesisHex))
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			if x >= int64(len(stored)) {
				return nil, errors.New("no such stored hash")
			}
			out[i] = stored[x]
		}
		return out, nil
	})
	var genesis tlog.Hash
	copy(genesis[:], auditCLIUnhex(t, genesisHex))
	leaves := []tlog.Hash{genesis}
	for _, r := range entries {
		leaves = append(leaves, tlog.RecordHash(r.encoded))
	}
	for i, leaf := range leaves {
		hs, err := tlog.StoredHashesForRecordHash(int64(i), leaf, reader)
		require.NoError(t, err)
		stored = append(stored, hs...)
	}
	_, err = db.Exec(ctx, `DELETE FROM audit_tree`)
	require.NoError(t, err)
	for i, h := range stored {
		_, err := db.Exec(ctx, `INSERT INTO audit_tree (idx, hash) VALUES ($1, $2)`, int64(i), hex.EncodeToString(h[:]))
		require.NoError(t, err)
	}
	size := int64(len(leaves))
	root, err := tlog.TreeHash(size, reader)
	require.NoError(t, err)
	if tamper.resignWith == "" {
		return
	}
	s, err := note.NewSigner(tamper.resignWith)
	require.NoError(t, err)
	signed, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n%d\n%s\n", s.Name(), size, base64.StdEncoding.EncodeToString(root[:]))}, s)
	require.NoError(t, err)
	n, err = db.Exec(ctx, `UPDATE audit_checkpoints SET root = $1, chain = $2, note = $3 WHERE name = 'latest' AND tree_size = $4`,
		hex.EncodeToString(root[:]), hex.EncodeToString(last.hash[:]), string(signed), size)
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the latest checkpoint covers every entry")
	_, err = db.Exec(ctx, `UPDATE audit_checkpoints SET root = $1, chain = $2 WHERE name = 'verified' AND tree_size = $3`,
		hex.EncodeToString(root[:]), hex.EncodeToString(last.hash[:]), size)
	require.NoError(t, err)
}

// TestAuditVerifyCLI: the client verifies the log, keeps its checkpoint,
// verifies the log's growth against it, and then catches a rewritten
// history three ways, on every engine.
func TestAuditVerifyCLI(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		for _, c := range []struct {
			name   string
			tamper func(skey string) auditCLITamper
		}{
			{"tree rebuilt", func(string) auditCLITamper { return auditCLITamper{rebuildTree: true} }},
			{"entry and chain only", func(string) auditCLITamper { return auditCLITamper{} }},
			{"re-signed with the ledger's key", func(skey string) auditCLITamper { return auditCLITamper{rebuildTree: true, resignWith: skey} }},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				skey, vkey, err := note.GenerateKey(rand.Reader, "foundry-audit")
				require.NoError(t, err)
				// A fixed key and fixed addresses: the system is restarted,
				// and the client's state is its address's.
				sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine), append([]string{"-audit-signing-key=" + skey,
					"-http-addr=" + allinonetest.FreeAddr(t), "-grpc-addr=" + allinonetest.FreeAddr(t)}, creditFlags...)...)
				config := t.TempDir()
				env := map[string]string{"FOUNDRY_URL": sys.BaseURL, "XDG_CONFIG_HOME": config, "FOUNDRY_API_KEY": allinonetest.AdminKey}

				ada := creditRegister(t, sys, "ada")
				for _, ref := range []string{"wire-1", "wire-2"} {
					requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, ref))
				}
				first := auditCLISequenced(t, sys)
				r, doc := auditCLIVerify(t, env)
				require.Equal(t, cli.ExitOK, r.code, r.stderr)
				require.Contains(t, r.stderr, "audit verifier key on first use: "+vkey)
				log := doc["log"].(map[string]any)
				require.Equal(t, true, log["valid"])
				require.Equal(t, float64(first), log["tree_size"])
				require.Nil(t, log["previous"])
				states, err := filepath.Glob(filepath.Join(config, "foundry", "audit", "*.json"))
				require.NoError(t, err)
				require.Len(t, states, 1)
				earlier, err := os.ReadFile(states[0])
				require.NoError(t, err)

				for _, ref := range []string{"wire-3", "wire-4"} {
					requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, ref))
				}
				size := auditCLISequenced(t, sys)
				require.Greater(t, size, first)
				r, doc = auditCLIVerify(t, env, "--entry", "3", "--entry", strconv.FormatInt(size-1, 10))
				require.Equal(t, cli.ExitOK, r.code, r.stderr)
				require.Empty(t, r.stderr)
				log = doc["log"].(map[string]any)
				require.Equal(t, true, log["valid"])
				require.Equal(t, "stored", log["key_trust"])
				require.Equal(t, float64(size), log["tree_size"])
				prev := log["previous"].(map[string]any)
				require.Equal(t, float64(first), prev["tree_size"])
				require.Equal(t, true, prev["extended"], "consistency from the checkpoint held to the new one")
				for _, en := range log["entries"].([]any) {
					require.Equal(t, true, en.(map[string]any)["included"], "%v", en)
				}
				latest, err := os.ReadFile(states[0])
				require.NoError(t, err)

				// Entry 3 (the second deposit) rewritten while Foundry is stopped.
				sys.Stop()
				auditCLIRewrite(t, sys, 3, c.tamper(skey))
				sys.Restart()

				held := func(state []byte) {
					require.NoError(t, os.WriteFile(states[0], state, 0o600))
				}
				switch c.name {
				case "tree rebuilt", "re-signed with the ledger's key":
					for _, h := range []struct {
						state []byte
						size  int64
					}{{latest, size}, {earlier, first}} {
						held(h.state)
						r, doc = auditCLIVerify(t, env)
						require.Equal(t, cli.ExitFailed, r.code, r.stderr)
						require.Contains(t, r.stderr, fmt.Sprintf("the audit log's history was rewritten since the checkpoint this client holds "+
							"(tree size %d, verified ", h.size))
						log = doc["log"].(map[string]any)
						require.Equal(t, false, log["valid"])
						require.Contains(t, log["reason"], "history was rewritten")
						require.Equal(t, false, log["previous"].(map[string]any)["extended"])
						after, err := os.ReadFile(states[0])
						require.NoError(t, err)
						require.Equal(t, h.state, after, "a rewritten history is never trusted")
					}
					if c.name == "re-signed with the ledger's key" {
						// The log's own checks pass: the tree hashes to the
						// root the key signed, and its verified checkpoint was
						// moved too. But the ledger's scrubber compares the
						// journal with the log: the deposit's journal entry
						// says 995 CC where the rewritten entry says 1 micro-CC.
						// A client that never saw the log trusts the log it is
						// shown, and is told the ledger found it broken.
						auditCLIFound(t, sys, 3)
						fresh := map[string]string{"FOUNDRY_URL": sys.BaseURL, "XDG_CONFIG_HOME": t.TempDir()}
						r, doc = auditCLIVerify(t, fresh)
						require.Equal(t, cli.ExitFailed, r.code, r.stderr)
						require.Equal(t, true, doc["log"].(map[string]any)["valid"], "the log it is shown is consistent: %v", doc)
						require.Contains(t, doc["reason"], "is not what audit entry 3 records", "%v", doc)
					}

				case "entry and chain only":
					// The tree still holds the entry as signed: the log's
					// checkpoints are consistent, and the hash chain verifies,
					// but the entry is not the one the log signed. The
					// ledger's scrubber finds it (its leaf, recomputed from
					// the entry, is not the tree's), so the ledger's own
					// answer fails while the client's proofs of the entries
					// around it pass.
					held(latest)
					auditCLIFound(t, sys, 3)
					r, doc = auditCLIVerify(t, env, "--entry", "2", "--entry", "4")
					require.Equal(t, cli.ExitFailed, r.code, "the ledger reports the finding: %s", r.stderr)
					require.Contains(t, r.stderr, "the audit chain is broken at seq 3 (integrity finding: ")
					require.Equal(t, true, doc["log"].(map[string]any)["valid"], "entries before and after it, whose encodings are untouched")

					r, doc = auditCLIVerify(t, env, "--entry", "3")
					require.Equal(t, cli.ExitFailed, r.code, r.stderr)
					require.Contains(t, r.stderr, "audit entry 3: not in the log as signed: the entry as the server shows it does not hash "+
						"to the leaf the signed tree holds (it was changed after it was sequenced)")
					log = doc["log"].(map[string]any)
					require.Equal(t, false, log["valid"])
					entry := log["entries"].([]any)[0].(map[string]any)
					require.Equal(t, 3.0, entry["seq"])
					require.Equal(t, false, entry["included"])

					// The ledger's full walk finds it too (an administrator's).
					r, doc = auditCLIVerify(t, env, "--full")
					require.Equal(t, cli.ExitFailed, r.code)
					require.Equal(t, false, doc["valid"])
					require.Equal(t, 3.0, doc["first_divergent_seq"])
					require.Contains(t, r.stderr, "the audit chain is broken at seq 3")
				}
			})
		}
	})
}
