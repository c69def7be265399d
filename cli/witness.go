package cli

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	fnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/witness/api"
	"github.com/transparency-dev/witness/witness"
	"golang.org/x/mod/sumdb/note"
)

// --- audit witness -----------------------------------------------------------------

// The witness is transparency-dev's (github.com/transparency-dev/witness):
// its Witness verifies a checkpoint's signature by the log's key, checks
// the consistency proof against the last checkpoint it cosigned for that
// log and cosigns (C2SP tlog-cosignature, cosignature/v1), and its HTTP
// handler speaks C2SP tlog-witness (POST /add-checkpoint). This command
// gives it a key, the logs it witnesses and a small store of its own.

func (e *env) auditWitness() *cobra.Command {
	var (
		listen, keyFile, state string
		logs                   []string
	)
	cmd := &cobra.Command{
		Use:   "witness --key-file FILE --state FILE --log VERIFIER_KEY... [--listen ADDR]",
		Short: "Run an independent witness of audit logs (C2SP tlog-witness): it cosigns a checkpoint only if it extends the last one it cosigned",
		Long: `Run a witness of Foundry audit logs, or of any log whose checkpoints are
signed notes (C2SP tlog-witness, cosignatures C2SP tlog-cosignature): a
process of its own, with its own key and its own store, that a ledger asks
to cosign each checkpoint (FOUNDRY_AUDIT_WITNESSES on the ledger). It cosigns
a checkpoint only when the log's key signed it and a consistency proof shows
it extends the last checkpoint it cosigned for that log; so a log cannot
show one history to one client and another to the next, even with its own
signing key, to a client that requires the witness's cosignature
(foundry audit verify --witness).

--key-file holds the witness's signing key, as foundry audit keygen --name
NAME prints it (a FOUNDRY_AUDIT_SIGNING_KEY=... line, or the key alone); its
verifier key (printed at startup) is what ledgers and clients are given.
--log names each log it witnesses by its verifier key (GET
/api/audit/verifier-key); the checkpoint's origin is the key's name. --state
is the file where it keeps the last checkpoint it cosigned for each log
(written atomically, mode 0600): keep it, since a witness that forgets
trusts the next checkpoint it is shown. It serves POST /add-checkpoint on
--listen until interrupted.`,
		Example: `  foundry audit keygen --name acme-witness > witness.key
  foundry audit witness --key-file witness.key --state witness.json \
    --log "$(curl -s http://ledger.example/api/audit/verifier-key)" --listen :8484`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		w, err := newWitness(keyFile, state, logs)
		if err != nil {
			return usageError{err}
		}
		lis, err := net.Listen("tcp", listen)
		if err != nil {
			return err
		}
		e.note("witness %s listening on %s (POST %s); logs: %s\n", w.vkey, lis.Addr(), api.HTTPAddCheckpoint, strings.Join(w.origins, ", "))
		return w.serve(cmd.Context(), lis)
	}
	f := cmd.Flags()
	f.StringVar(&keyFile, "key-file", "", "the witness's signing key (foundry audit keygen --name NAME writes one)")
	f.StringVar(&state, "state", "", "the file where the witness keeps the last checkpoint it cosigned for each log")
	f.StringArrayVar(&logs, "log", nil, "the verifier key of a log to witness (repeat for several)")
	f.StringVar(&listen, "listen", "127.0.0.1:8484", "the address to serve tlog-witness on")
	return cmd
}

// runningWitness is a witness ready to serve.
type runningWitness struct {
	handler *witness.HTTPHandler
	vkey    string
	origins []string
}

// newWitness builds the witness from its key file, its state file and the
// logs' verifier keys.
func newWitness(keyFile, statePath string, logs []string) (*runningWitness, error) {
	if keyFile == "" || statePath == "" || len(logs) == 0 {
		return nil, errors.New("--key-file, --state and at least one --log are required")
	}
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("--key-file: %w", err)
	}
	skey := ""
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimPrefix(strings.TrimSpace(line), "FOUNDRY_AUDIT_SIGNING_KEY="); strings.HasPrefix(line, "PRIVATE+KEY+") {
			skey = line
			break
		}
	}
	signer, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		return nil, fmt.Errorf("--key-file holds no signing key (foundry audit keygen --name NAME makes one): %w", err)
	}
	vkey, err := witnessVerifierKey(skey)
	if err != nil {
		return nil, err
	}
	verifiers := map[string]note.Verifier{}
	var origins []string
	for _, k := range logs {
		v, err := note.NewVerifier(strings.TrimSpace(k))
		if err != nil {
			return nil, fmt.Errorf("--log %q is not a note verifier key (<name>+<hash>+<key>): %w", k, err)
		}
		verifiers[v.Name()] = v
		origins = append(origins, v.Name())
	}
	w, err := witness.New(context.Background(), witness.Opts{
		Persistence: &fileState{path: statePath},
		Signers:     []note.Signer{signer},
		VerifierForLog: func(_ context.Context, origin string) (note.Verifier, bool, error) {
			v, ok := verifiers[origin]
			return v, ok, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return &runningWitness{handler: witness.NewHTTPHandler(w), vkey: vkey, origins: origins}, nil
}

// witnessVerifierKey is the verifier key of a signing key, as ledgers and
// clients are given it (the plain Ed25519 note key: cosignature/v1
// verifiers accept it).
func witnessVerifierKey(skey string) (string, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		return "", err
	}
	// note keeps the public key to itself; the verifier key of the same
	// seed, made the way GenerateKey makes it.
	fields := strings.SplitN(skey, "+", 5)
	if len(fields) != 5 {
		return "", errors.New("not an Ed25519 note key")
	}
	return verifierFromSeed(s.Name(), fields[4])
}

// verifierFromSeed is the note verifier key named name of the Ed25519 key
// whose signing key's last field is seed64 (the algorithm byte and the
// seed, in base64).
func verifierFromSeed(name, seed64 string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(seed64)
	if err != nil || len(raw) != 1+ed25519.SeedSize {
		return "", errors.New("not an Ed25519 note key")
	}
	return note.NewEd25519VerifierKey(name, ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey))
}

// serve serves tlog-witness on lis until ctx ends.
func (w *runningWitness) serve(ctx context.Context, lis net.Listener) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.HTTPAddCheckpoint, w.handler.AddCheckpoint)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	case err := <-done:
		return err
	}
}

// fileState keeps the last checkpoint the witness cosigned for each log in
// one JSON file ({origin: signed note}), replaced atomically on each
// update, under a lock: the witness's witness.LogStatePersistence.
type fileState struct {
	path string
	mu   sync.Mutex
}

func (f *fileState) Init(context.Context) error {
	_, err := f.load()
	return err
}

func (f *fileState) load() (map[string]string, error) {
	raw, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s is not a witness's state (%w): move it away only if this witness never cosigned anything", f.path, err)
	}
	return out, nil
}

func (f *fileState) Latest(_ context.Context, origin string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.load()
	if err != nil || st[origin] == "" {
		return nil, err
	}
	return []byte(st[origin]), nil
}

func (f *fileState) Update(_ context.Context, origin string, update func([]byte) ([]byte, error)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.load()
	if err != nil {
		return err
	}
	var prev []byte
	if st[origin] != "" {
		prev = []byte(st[origin])
	}
	next, err := update(prev)
	if err != nil {
		return err
	}
	st[origin] = string(next)
	raw, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(f.path, append(raw, '\n'))
}

// writeAtomic writes raw to path through a temporary file renamed over it,
// readable by the user alone.
func writeAtomic(path string, raw []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(raw)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}
