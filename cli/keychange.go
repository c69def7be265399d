package cli

import (
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/platform/auditlog"
)

// A ledger records each change of its signing key in its log: a
// key_changed entry whose statement (auditlog.KeyChange) the new key
// signs and, when the operator gave the old key for the rotation, the old
// one countersigns (GET /api/audit/key-changes lists them). A client that
// trusts the old key follows such a change without being told: the old
// key's countersignature hands the log to the new key, and the entry's
// inclusion in the tree the new key signed, whose consistency with the
// checkpoint the client holds is proven, puts the change in the history
// it already verified. A change without the countersignature is refused
// as any other change of key is, until --key confirms the new key.

// keyChangeReport is one change of key the client followed.
type keyChangeReport struct {
	Seq  int64  `json:"seq"`
	From string `json:"from_key"`
	To   string `json:"to_key"`
}

// followKeys finds, among the server's changes of key (oldest first), the
// countersigned ones that lead from the key the client trusts to the key
// the server serves. It returns nil without an error when no change
// leaves the trusted key, and an error when one does but a step lacks a
// valid countersignature.
func followKeys(changes []*ledgerv1.AuditKeyChange, from, to string) ([]*ledgerv1.AuditKeyChange, *logError) {
	var path []*ledgerv1.AuditKeyChange
	current := from
	for _, c := range changes {
		if c.GetFromKey() != current {
			continue
		}
		k, countersigned, err := auditlog.OpenKeyChange(c.GetStatement())
		switch {
		case err != nil:
			return nil, logFailure("the server's change of audit key at seq %d does not verify: %v", c.GetSeq(), err)
		case k.Seq != c.GetSeq() || k.From != c.GetFromKey() || k.To != c.GetToKey():
			return nil, logFailure("the server's change of audit key at seq %d is not the one its statement signs (seq %d, %s to %s)",
				c.GetSeq(), k.Seq, k.From, k.To)
		case !countersigned:
			return nil, logFailure("the server's audit verifier key changed from %s to %s at seq %d without the old key's "+
				"countersignature, so this client cannot follow it by signature. If the operator confirms the new key, run "+
				"again with --key %s", k.From, k.To, k.Seq, to)
		}
		path, current = append(path, c), k.To
		if current == to {
			return path, nil
		}
	}
	if len(path) > 0 {
		return nil, logFailure("the server's countersigned changes of audit key lead from %s to %s, not to the key it serves (%s)",
			from, current, to)
	}
	return nil, nil
}

// checkKeyChanges checks that each change followed is in the tree of
// size n with root, as the entry its proof shows: a key_changed entry
// carrying the statement the client verified.
func checkKeyChanges(path []*ledgerv1.AuditKeyChange, proofs []entryEvidence, n int64, root [32]byte) *logError {
	for i, c := range path {
		if i >= len(proofs) || proofs[i].Seq != c.GetSeq() {
			return logFailure("the server gave no proof of its change of audit key at seq %d", c.GetSeq())
		}
		var r entryReport
		if why := checkEntry(proofs[i], n, root, &r); why != "" {
			return logFailure("the change of audit key at seq %d is not in the signed log: %s", c.GetSeq(), why)
		}
		shown := proofs[i].Proof.GetEntry()
		if shown.GetKind() != auditlog.KeyChangedKind || shown.GetAttrs()[auditlog.StatementAttr] != c.GetStatement() {
			return logFailure("the signed log's entry %d is not the change of audit key the server lists (a %s)", c.GetSeq(),
				shown.GetKind())
		}
	}
	return nil
}
