package auditlog_test

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"

	"github.com/foundryhq/foundry/services/platform/auditlog"
)

// noteKey makes a note key pair named name.
func noteKey(t *testing.T, name string) (note.Signer, string) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	require.NoError(t, err)
	s, err := note.NewSigner(skey)
	require.NoError(t, err)
	return s, vkey
}

func TestKeyChangeStatementIsStable(t *testing.T) {
	t.Parallel()
	k := auditlog.KeyChange{Origin: "foundry-audit", Seq: 64, From: "foundry-audit+0a0b0c0d+old", To: "foundry-audit+01020304+new"}
	require.Equal(t, "foundry audit key change v1\nfoundry-audit\n64\nfoundry-audit+0a0b0c0d+old\nfoundry-audit+01020304+new\n", k.Text())
}

func TestKeyChangeSignatures(t *testing.T) {
	t.Parallel()
	oldS, oldV := noteKey(t, "foundry-audit")
	newS, newV := noteKey(t, "foundry-audit")
	otherS, _ := noteKey(t, "foundry-audit")
	k := auditlog.KeyChange{Origin: "foundry-audit", Seq: 12, From: oldV, To: newV}

	both, err := auditlog.SignKeyChange(k, newS, oldS)
	require.NoError(t, err)
	got, countersigned, err := auditlog.OpenKeyChange(both)
	require.NoError(t, err)
	require.Equal(t, k, got)
	require.True(t, countersigned, "signed by both keys")

	alone, err := auditlog.SignKeyChange(k, newS)
	require.NoError(t, err)
	got, countersigned, err = auditlog.OpenKeyChange(alone)
	require.NoError(t, err)
	require.Equal(t, k, got)
	require.False(t, countersigned, "the new key alone")

	oldOnly, err := auditlog.SignKeyChange(k, oldS)
	require.NoError(t, err)
	_, _, err = auditlog.OpenKeyChange(oldOnly)
	require.ErrorIs(t, err, auditlog.ErrNotSignedByNewKey, "the old key cannot hand the log to a key that did not sign")

	// A forger's key signing a statement that names the real keys is no
	// signature of either.
	forged, err := auditlog.SignKeyChange(k, otherS)
	require.NoError(t, err)
	_, _, err = auditlog.OpenKeyChange(forged)
	require.ErrorIs(t, err, auditlog.ErrNotSignedByNewKey)

	// Moved to another seq, the signatures no longer hold.
	moved := strings.Replace(both, "\n12\n", "\n13\n", 1)
	_, _, err = auditlog.OpenKeyChange(moved)
	require.Error(t, err)
	require.Contains(t, err.Error(), "invalid signature")
}

func TestParseKeyChangeRefusesWhatTextWouldNotWrite(t *testing.T) {
	t.Parallel()
	_, oldV := noteKey(t, "foundry-audit")
	_, newV := noteKey(t, "foundry-audit")
	_, otherName := noteKey(t, "elsewhere")
	for name, text := range map[string]string{
		"no header":          "foundry-audit\n1\n" + oldV + "\n" + newV + "\n",
		"seq 0":              "foundry audit key change v1\nfoundry-audit\n0\n" + oldV + "\n" + newV + "\n",
		"leading zero":       "foundry audit key change v1\nfoundry-audit\n01\n" + oldV + "\n" + newV + "\n",
		"no final newline":   "foundry audit key change v1\nfoundry-audit\n1\n" + oldV + "\n" + newV,
		"another key's name": "foundry audit key change v1\nfoundry-audit\n1\n" + oldV + "\n" + otherName + "\n",
		"the same key":       "foundry audit key change v1\nfoundry-audit\n1\n" + oldV + "\n" + oldV + "\n",
		"not a key":          "foundry audit key change v1\nfoundry-audit\n1\n" + oldV + "\nfoundry-audit+zz\n",
	} {
		_, err := auditlog.ParseKeyChange(text)
		require.Error(t, err, name)
	}
	k, err := auditlog.ParseKeyChange("foundry audit key change v1\nfoundry-audit\n1\n" + oldV + "\n" + newV + "\n")
	require.NoError(t, err)
	require.Equal(t, auditlog.KeyChange{Origin: "foundry-audit", Seq: 1, From: oldV, To: newV}, k)
}
