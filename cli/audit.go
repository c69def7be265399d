package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"google.golang.org/protobuf/proto"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
)

// --- audit -----------------------------------------------------------------------

func (e *env) auditCommand() *cobra.Command {
	return group("audit", "The audit log: list, verify (with its signed checkpoints) and repair; checkpoints and signing keys",
		withIDs(e.auditList(), "entries.seq"), e.auditVerify(), e.auditRepair(), e.auditCheckpoint(), e.auditKeygen(), e.auditWitness())
}

func (e *env) auditList() *cobra.Command {
	var limit, offset int32
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the audit chain, newest first (amounts in CC, USD or CC per USD: the UNIT column)",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		req := &ledgerv1.ListAuditEntriesRequest{Offset: offset}
		if cmd.Flags().Changed("limit") {
			req.Limit = proto.Int32(limit)
		}
		resp := &ledgerv1.ListAuditEntriesResponse{}
		raw, err := e.client.call(ctx, opListAudit, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		e.pageHint("entries", len(resp.GetEntries()), resp.GetPagination(), false)
		rows := make([][]string, len(resp.GetEntries()))
		for i, en := range resp.GetEntries() {
			unit := en.GetUnit()
			if unit == "" {
				unit = "-"
			}
			rows[i] = []string{fmt.Sprint(en.GetSeq()), en.GetKind(), formatFloat(en.GetAmount()), unit,
				who(en.GetSubject(), en.GetSubjectHandle()), who(en.GetActor(), en.GetActorHandle()), en.GetCreatedAt()}
		}
		return e.table([]string{"SEQ", "KIND", "AMOUNT", "UNIT", "SUBJECT", "ACTOR", "CREATED"}, rows)
	})
	cmd.Flags().Int32Var(&limit, "limit", 0, "entries per page (server default 50, at most 500)")
	cmd.Flags().Int32Var(&offset, "offset", 0, "entries to skip")
	return cmd
}

// brokenChainError is a verification that found the chain broken: the
// answer is printed, and the command exits 1 so a script notices.
type brokenChainError struct {
	seq    int64
	reason string
}

func (b *brokenChainError) Error() string {
	return fmt.Sprintf("the audit chain is broken at seq %d (%s): an administrator can record the break with foundry audit repair",
		b.seq, b.reason)
}

func (e *env) auditVerify() *cobra.Command {
	var (
		full      bool
		key       string
		entries   []int64
		witnesses []string
	)
	cmd := &cobra.Command{
		Use:   "verify [--entry SEQ]... [--key VERIFIER_KEY] [--witness WITNESS_KEY]... [--full]",
		Short: "Verify the audit log: the ledger's walk of its chain, and its signed checkpoint here (exit 1 when either fails)",
		Long: `Verify the audit log, two ways; either failing exits 1, with what failed on
standard error, after the report.

The ledger walks its chain (GET /api/audit/verify): every entry from where its
last verification stopped (--full: from the first entry, administrator)
checks out against its hash, the tree's leaf and the signed root, or lies in
a break a repair recorded (listed in repaired_breaks).

This client checks the log's signed checkpoint itself, trusting the ledger
only for what it can prove: the checkpoint is signed by the log's verifier
key (the one this client trusted the first time it verified this server, or
--key); it extends, by a consistency proof, the last checkpoint this client
verified for this server (a smaller one means the log was rolled back, a
proof that fails that its history was rewritten); and each --entry is
included in it, as the entry is shown: this client recomputes the entry's
leaf from the fields the ledger shows for it (GET /api/audit), so a field
changed after the entry was sequenced fails. With --witness, the
checkpoint must carry a valid cosignature by each witness given (by its
verifier key): a witness cosigns only a checkpoint that extends the last
one it cosigned, so a ledger cannot show this client a history it forked
for it alone, even signed with its own key. The key and the checkpoint are
kept in $XDG_CONFIG_HOME/foundry/audit (else ~/.config/foundry/audit), one
file per server. A server that serves another key than the one trusted is
followed only along the changes of key its log records, each
countersigned by the key it replaces and included in the tree the new key
signed (GET /api/audit/key-changes); otherwise it is refused: if its
operator confirms the new key, give it with --key, which then replaces
the trusted one.

With --json the ledger's answer is printed with one more member, log: what
this client verified.`,
		Example: `  foundry audit verify
  foundry audit verify --entry 42 --entry 97
  foundry audit verify --key "$(cat audit-verifier.key)"`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		for _, seq := range entries {
			if seq < 1 || seq > 1<<31-1 {
				return usagef("--entry %d is not an entry's seq (from 1)", seq)
			}
		}
		key = strings.TrimSpace(key)
		for i, w := range witnesses {
			witnesses[i] = strings.TrimSpace(w)
			if _, err := fnote.NewVerifierForCosignatureV1(witnesses[i]); err != nil {
				return usagef("--witness %q is not a witness's verifier key (<name>+<hash>+<key>): %v", w, err)
			}
		}
		if cmd.Flags().Changed("key") {
			if _, err := note.NewVerifier(key); err != nil {
				return usagef("--key is not a note verifier key (<name>+<hash>+<key>, as foundry audit keygen prints it): %v", err)
			}
		}
		dir := auditStateDir(e.getenv)
		if dir == "" {
			return usagef("audit verify keeps the key and checkpoint it trusts in $XDG_CONFIG_HOME/foundry/audit or ~/.config/foundry/audit: " +
				"set HOME or XDG_CONFIG_HOME")
		}
		server := e.cfg.server()
		held, err := loadAuditState(auditStateFile(dir, server), server)
		if err != nil {
			return usageError{err}
		}

		o, req := opVerifyAudit, &ledgerv1.VerifyAuditRequest{}
		if full {
			o, req.Full = opVerifyAuditFull, true
		}
		chain := &ledgerv1.VerifyAuditResponse{}
		raw, err := e.client.call(ctx, o, req, chain, callOpts{})
		if err != nil {
			return err
		}
		ev, err := e.fetchLog(ctx, key, held, entries)
		if err != nil {
			return err
		}
		ev.Witnesses = witnesses
		rep, next, logErr := verifyLog(ev, held, time.Now())
		if next != nil {
			if err := next.save(); err != nil {
				return err
			}
		}
		if rep.KeyTrust == "first_use" && next != nil {
			e.note("trusting %s's audit verifier key on first use: %s\n"+
				"  (compare it with the one its operator publishes; it is kept in %s)\n", server, rep.VerifierKey, held.path)
		}
		if rep.KeyTrust == "key_change" && next != nil {
			e.note("following %s's change of audit key, countersigned by the key this client trusted: now trusting %s\n",
				server, rep.VerifierKey)
		}
		if err := e.printVerification(raw, rep); err != nil {
			return err
		}
		var errs []error
		if !chain.GetValid() {
			errs = append(errs, &brokenChainError{seq: chain.GetFirstDivergentSeq().GetValue(), reason: chain.GetReason().GetValue()})
		}
		if logErr != nil {
			errs = append(errs, logErr)
		}
		return errors.Join(errs...)
	})
	f := cmd.Flags()
	f.Int64SliceVar(&entries, "entry", nil, "also prove that the entry with this seq, as the ledger shows it, is in the signed log (repeat for several)")
	f.StringVar(&key, "key", "", "the log's verifier key, instead of the one trusted on first use (it replaces it)")
	f.StringArrayVar(&witnesses, "witness", nil, "require the checkpoint's cosignature by the witness with this verifier key (repeat for several)")
	f.BoolVar(&full, "full", false, "the ledger walks its chain from the first entry (administrator)")
	return cmd
}

// fetchLog asks the server for what verifyLog checks: its verifier key,
// its latest checkpoint, the consistency proof from the held checkpoint
// and the entries' inclusion proofs, all in the tree of the checkpoint
// served.
func (e *env) fetchLog(ctx context.Context, given string, held auditState, entries []int64) (logEvidence, error) {
	ev := logEvidence{GivenKey: given}
	var err error
	if ev.ServedKey, err = e.auditText(ctx, opAuditVerifierKey, &ledgerv1.GetAuditVerifierKeyRequest{}, &ledgerv1.GetAuditVerifierKeyResponse{}); err != nil {
		return ev, err
	}
	ev.ServedKey = strings.TrimSpace(ev.ServedKey)
	ev.Note, err = e.auditText(ctx, opAuditCheckpoint, &ledgerv1.GetAuditCheckpointRequest{}, &ledgerv1.GetAuditCheckpointResponse{})
	var api *apiError
	if errors.As(err, &api) && api.Status == http.StatusNotFound {
		ev.Note, err = "", nil // no checkpoint yet
	}
	if err != nil {
		return ev, err
	}
	// The size the proofs are asked in; verifyLog checks the signature.
	c, perr := parseCheckpoint(noteText(ev.Note))
	if ev.Note == "" || perr != nil {
		for _, seq := range entries {
			ev.Entries = append(ev.Entries, entryEvidence{Seq: seq})
		}
		return ev, nil
	}
	from := c.size
	if h := held.Checkpoint; h != nil {
		from = h.TreeSize
	}
	if from <= c.size && c.size <= 1<<31-1 {
		ev.Consistency = &ledgerv1.GetAuditConsistencyResponse{}
		if _, err := e.client.call(ctx, opAuditConsistency, &ledgerv1.GetAuditConsistencyRequest{From: from, To: c.size},
			ev.Consistency, callOpts{}); err != nil {
			if !refused(err) {
				return ev, err
			}
			ev.Consistency = nil
		}
	}
	for _, seq := range entries {
		en, err := e.fetchProof(ctx, seq, c.size)
		if err != nil {
			return ev, err
		}
		ev.Entries = append(ev.Entries, en)
	}
	if given == "" && held.VerifierKey != "" && ev.ServedKey != held.VerifierKey {
		// Another key: the changes the log records may lead to it.
		list := &ledgerv1.ListAuditKeyChangesResponse{}
		if _, err := e.client.call(ctx, opAuditKeyChanges, &ledgerv1.ListAuditKeyChangesRequest{}, list, callOpts{}); err != nil {
			return ev, err
		}
		ev.KeyChanges = list.GetKeyChanges()
		path, _ := followKeys(ev.KeyChanges, held.VerifierKey, ev.ServedKey)
		for _, k := range path {
			en, err := e.fetchProof(ctx, k.GetSeq(), c.size)
			if err != nil {
				return ev, err
			}
			ev.KeyChangeProofs = append(ev.KeyChangeProofs, en)
		}
	}
	return ev, nil
}

// fetchProof asks for the inclusion proof of the entry seq in the tree of
// the given size (none when the tree does not cover it; a refusal is
// kept as the evidence's Err, for verifyLog to report).
func (e *env) fetchProof(ctx context.Context, seq, size int64) (entryEvidence, error) {
	en := entryEvidence{Seq: seq}
	if seq >= size {
		return en, nil
	}
	p := &ledgerv1.GetAuditProofResponse{}
	_, err := e.client.call(ctx, opAuditProof, &ledgerv1.GetAuditProofRequest{Seq: seq, TreeSize: size}, p, callOpts{})
	switch {
	case err == nil:
		en.Proof = p
	case refused(err):
		en.Err = err.Error()
	default:
		return en, err
	}
	return en, nil
}

// refused reports an answer that is about what was asked (no such entry,
// a size out of range), which verifyLog reports, rather than a failure to
// ask at all (a refused credential, Foundry not reachable).
func refused(err error) bool {
	var api *apiError
	return errors.As(err, &api) && (api.Status == http.StatusNotFound || api.Status == http.StatusUnprocessableEntity ||
		api.Status == http.StatusBadRequest)
}

// auditText performs a text op and returns its text.
func (e *env) auditText(ctx context.Context, o op, in, out proto.Message) (string, error) {
	if _, err := e.client.call(ctx, o, in, out, callOpts{}); err != nil {
		return "", err
	}
	m, fd := textField(o, out)
	return m.Get(fd).String(), nil
}

// printVerification prints the ledger's answer and the log's report: with
// --json the answer with a "log" member, else the answer's rows followed
// by the report's.
func (e *env) printVerification(raw []byte, rep logReport) error {
	if e.machine() {
		logJSON, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		obj := bytes.TrimSpace(raw)
		if len(obj) < 2 || obj[len(obj)-1] != '}' {
			return fmt.Errorf("unexpected answer (not a JSON object): %.200s", raw)
		}
		var b bytes.Buffer
		b.Write(obj[:len(obj)-1])
		if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"log":`)
		b.Write(logJSON)
		b.WriteByte('}')
		return e.printJSON(b.Bytes())
	}
	fields, err := objectFields(raw)
	if err != nil {
		return err
	}
	var rows [][]string
	for _, f := range fields {
		rows = append(rows, []string{f.name, cell(f.value)})
	}
	return e.table(nil, append(rows, logRows(rep)...))
}

// logRows are the report as "field  value" rows.
func logRows(rep logReport) [][]string {
	orDash := func(s *string) string {
		if s == nil {
			return "-"
		}
		return *s
	}
	checkpoint := "none yet (nothing sequenced)"
	if rep.TreeSize != nil {
		checkpoint = fmt.Sprintf("%s, tree size %d, root %s", *rep.Origin, *rep.TreeSize, *rep.RootHash)
	}
	trust := map[string]string{"given": "given with --key", "stored": "trusted before", "first_use": "trusted on first use"}[rep.KeyTrust]
	if rep.KeyTrust == "key_change" {
		steps := make([]string, len(rep.KeyChanges))
		for i, k := range rep.KeyChanges {
			steps[i] = fmt.Sprintf("seq %d from %s", k.Seq, k.From)
		}
		trust = "followed the log's countersigned key change at " + strings.Join(steps, ", then ")
	}
	rows := [][]string{
		{"log_valid", strconv.FormatBool(rep.Valid)},
		{"log_reason", orDash(rep.Reason)},
		{"log_checkpoint", checkpoint},
		{"log_verifier_key", rep.VerifierKey + " (" + trust + ")"},
	}
	prev := "-"
	if p := rep.Previous; p != nil {
		prev = fmt.Sprintf("tree size %d, root %s, verified %s", p.TreeSize, p.RootHash, p.VerifiedAt)
		switch {
		case p.Extended && rep.TreeSize != nil && *rep.TreeSize == p.TreeSize:
			prev += ": unchanged"
		case p.Extended:
			prev += ": extended (consistency proven)"
		}
	}
	rows = append(rows, []string{"log_previous", prev})
	if len(rep.Witnesses) > 0 {
		rows = append(rows, []string{"log_cosigned_by", strings.Join(rep.Witnesses, ", ")})
	}
	for _, en := range rep.Entries {
		state := "included"
		if !en.Included {
			state = "NOT INCLUDED: " + orDash(en.Reason)
		}
		rows = append(rows, []string{"log_entry_" + strconv.FormatInt(en.Seq, 10), state})
	}
	return append(rows, []string{"log_state_file", rep.StateFile})
}

func (e *env) auditRepair() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Heal what the ledger's checks found, append-only (administrator)",
		Long: `Heal what the ledger's checks found (administrator), never rewriting a row:
every break of the chain is recorded by a repair entry that accepts exactly
the broken entries, as they are now; a missing entry is restored from its
journal entry (or recorded lost); where the journal disagrees with the log, a
logged correction restores every balance the log recorded; cached balances
and the CC outstanding are restored. Then everything is checked again and
the integrity findings resolved; a frozen economy stays frozen until foundry
incidents unfreeze. What cannot be healed is answered with the reason.`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		raw, err := e.client.call(ctx, opRepairAudit, &ledgerv1.RepairAuditRequest{}, &ledgerv1.RepairAuditResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

func (e *env) auditCheckpoint() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Print the audit log's latest signed checkpoint, as served",
		Long: `Print the audit log's latest signed checkpoint exactly as the ledger serves it
(GET /api/audit/checkpoint): a signed note whose text is the log's origin,
its tree size and root hash (standard base64), followed by a blank line and
the signature. Nothing is verified: foundry audit verify does that. With
--json: {"note": "..."}.`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		resp := &ledgerv1.GetAuditCheckpointResponse{}
		text, err := e.auditText(ctx, opAuditCheckpoint, &ledgerv1.GetAuditCheckpointRequest{}, resp)
		if err != nil {
			return err
		}
		if e.machine() {
			return e.printMessage(resp)
		}
		_, err = fmt.Fprint(e.stdout, text)
		return err
	})
	return cmd
}

// defaultAuditKeyName is the name audit keygen gives a key: the origin
// line of the checkpoints it signs.
const defaultAuditKeyName = "foundry-audit"

func (e *env) auditKeygen() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "keygen [--name NAME]",
		Short: "Make a key to sign the audit log's checkpoints (FOUNDRY_AUDIT_SIGNING_KEY) and print it with its verifier key",
		Long: `Make a new Ed25519 key for the ledger to sign the audit log's checkpoints
with, as signed-note keys (golang.org/x/mod/sumdb/note), and print it as an
environment line for the ledger, followed by its verifier key as a comment:

  FOUNDRY_AUDIT_SIGNING_KEY=PRIVATE+KEY+<name>+<hash>+<key>
  # verifier key: <name>+<hash>+<key>

The output is a valid env file (docker --env-file, systemd EnvironmentFile).
Keep the signing key secret, like the administrator key; publish the
verifier key, so clients (foundry audit verify --key) can check they trust
the right one. The name is the log's origin, the first line of every
checkpoint. Nothing is sent anywhere. With --json:
{"signing_key": "...", "verifier_key": "..."}.`,
		Example: `  foundry audit keygen --name acme-ledger > audit.env && chmod 600 audit.env`,
		Args:    cobra.NoArgs,
	}
	cmd.RunE = func(*cobra.Command, []string) error {
		return e.keygen(name, "FOUNDRY_AUDIT_SIGNING_KEY=%s\n# verifier key: %s\n")
	}
	cmd.Flags().StringVar(&name, "name", defaultAuditKeyName, "the key's name: the log's origin")
	return cmd
}
