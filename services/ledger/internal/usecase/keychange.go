package usecase

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/auditlog"
)

// A change of the log's signing key is an operator's action: the ledger
// restarted with a new FOUNDRY_AUDIT_SIGNING_KEY and the old one as
// FOUNDRY_AUDIT_PREVIOUS_SIGNING_KEY (or, when the old key is lost, only
// its verifier key among FOUNDRY_AUDIT_PREVIOUS_VERIFIER_KEYS). The first
// batch it then sequences records the change in the log itself: a
// key_changed entry whose statement (auditlog.KeyChange) the new key
// signs and the old one countersigns, in the tree the new key's first
// checkpoint covers. From that entry on the old key is retired: a latest
// checkpoint it signed is tampering (openCheckpoint), so a leaked old key
// cannot sign a history on. A client that trusts the old key follows the
// change by its countersignature (foundry audit verify); without one it
// must be given the new key.

// KeyChange is a recorded change of the log's signing key.
type KeyChange struct {
	// Seq is the key_changed entry's.
	Seq      int64
	From, To string
	// Statement is the signed note of the change (auditlog.KeyChange);
	// Countersigned says whether the old key signed it too.
	Statement     string
	Countersigned bool
	At            time.Time
}

// trustedKeys are the keys a checkpoint of the log may be signed by: the
// ledger's own, then its previous ones.
func (a *App) trustedKeys() []string {
	keys := []string{a.signer.VerifierKey()}
	if p := a.cfg.AuditPreviousSigner; p != nil {
		keys = append(keys, p.VerifierKey())
	}
	for _, k := range a.cfg.AuditPreviousKeys {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// KeyChanges reads the log's recorded changes of signing key, oldest
// first.
func (a *App) KeyChanges(ctx context.Context) ([]KeyChange, error) {
	return a.keyChanges(ctx, a.read())
}

func (a *App) keyChanges(ctx context.Context, r Repos) ([]KeyChange, error) {
	recs, err := r.Audit.KeyChanges(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]KeyChange, len(recs))
	for i, rec := range recs {
		attrs := rec.Entry.Attrs
		out[i] = KeyChange{Seq: rec.Entry.Seq, From: attrs[auditlog.FromAttr], To: attrs[auditlog.ToAttr],
			Statement: attrs[auditlog.StatementAttr], Countersigned: attrs[auditlog.CountersignedAttr] == "true", At: rec.Entry.At}
	}
	return out, nil
}

// retiredAt finds the change that retired the key vkey (retired false
// when the log records none).
func (a *App) retiredAt(ctx context.Context, r Repos, vkey string) (KeyChange, bool, error) {
	changes, err := a.keyChanges(ctx, r)
	if err != nil {
		return KeyChange{}, false, err
	}
	for _, k := range changes {
		if k.From == vkey {
			return k, true, nil
		}
	}
	return KeyChange{}, false, nil
}

// changeKey adds the key_changed entry of the change from st.rotated to
// the ledger's key as the batch's next entry, its statement signed by the
// new key and countersigned by the old one when the ledger holds it.
func (a *App) changeKey(st *logState) error {
	k := auditlog.KeyChange{Origin: a.signer.Origin(), Seq: st.eco.AuditSeq + 1, From: st.rotated, To: a.signer.VerifierKey()}
	var old []*audit.Signer
	if p := a.cfg.AuditPreviousSigner; p != nil && p.VerifierKey() == st.rotated {
		old = append(old, p)
	}
	statement, err := a.signer.SignKeyChange(k, old...)
	if err != nil {
		return err
	}
	st.changeSeq, st.countersigned = k.Seq, len(old) > 0
	st.add(audit.Entry{Kind: auditlog.KeyChangedKind, At: a.now(), Actor: "sequencer", Subject: k.Origin, Attrs: map[string]string{
		auditlog.FromAttr: k.From, auditlog.ToAttr: k.To, auditlog.StatementAttr: statement,
		auditlog.CountersignedAttr: strconv.FormatBool(st.countersigned),
	}}, "")
	return nil
}

// keyChangeIncident reports the change of key st's batch recorded: for
// the record when the old key countersigned it; a warning when it did
// not, since clients that trust the old key cannot follow by signature.
func (a *App) keyChangeIncident(st *logState, now time.Time) store.Incident {
	in := store.Incident{ID: a.cfg.NewID(), Kind: "audit_key_rotated", Severity: "info", Actor: "sequencer", CreatedAt: now,
		Detail: fmt.Sprintf("the audit log's signing key changed from %s to %s (entry %d, countersigned by the old key); "+
			"clients that trust the old key follow the change", st.rotated, a.signer.VerifierKey(), st.changeSeq)}
	if !st.countersigned {
		in.Severity = "warning"
		in.Detail = fmt.Sprintf("the audit log's signing key changed from %s to %s (entry %d) without the old key's "+
			"countersignature (FOUNDRY_AUDIT_PREVIOUS_SIGNING_KEY was not given): give clients the new verifier key",
			st.rotated, a.signer.VerifierKey(), st.changeSeq)
	}
	return in
}
