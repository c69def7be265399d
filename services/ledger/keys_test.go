package ledger

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
)

func signer(t *testing.T, name string) *audit.Signer {
	t.Helper()
	skey, _, err := audit.GenerateKey(name)
	require.NoError(t, err)
	s, err := audit.NewSigner(skey)
	require.NoError(t, err)
	return s
}

// TestPreviousKeysKeepTheOrigin: a previous key named otherwise than the
// signing key would change the log's origin, making it a new log to its
// clients and witnesses; the ledger refuses to start with one.
func TestPreviousKeysKeepTheOrigin(t *testing.T) {
	t.Parallel()
	current, same, other := signer(t, "acme-ledger"), signer(t, "acme-ledger"), signer(t, "elsewhere")
	require.NoError(t, samePreviousName(usecase.Config{AuditSigner: current, AuditPreviousSigner: same,
		AuditPreviousKeys: []string{same.VerifierKey()}}))
	err := samePreviousName(usecase.Config{AuditSigner: current, AuditPreviousSigner: other})
	require.EqualError(t, err, `FOUNDRY_AUDIT_PREVIOUS_SIGNING_KEY is named "elsewhere", but FOUNDRY_AUDIT_SIGNING_KEY "acme-ledger": `+
		`a key change keeps the log's origin, so make the new key with the old one's name (foundry audit keygen --name elsewhere)`)
	err = samePreviousName(usecase.Config{AuditSigner: current, AuditPreviousKeys: []string{other.VerifierKey()}})
	require.EqualError(t, err, "FOUNDRY_AUDIT_PREVIOUS_VERIFIER_KEYS: "+other.VerifierKey()+` is named "elsewhere", but `+
		`FOUNDRY_AUDIT_SIGNING_KEY "acme-ledger": a key change keeps the log's origin, so make the new key with the old one's name `+
		`(foundry audit keygen --name elsewhere)`)
}
