package auditlog_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/auditlog"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 123456789, time.UTC)

func entry(seq int64) auditlog.Entry {
	return auditlog.Entry{
		Seq: seq, Kind: "stake", At: t0.Add(time.Duration(seq) * time.Second), Actor: "ada", Subject: "ada",
		Amount: -1_500_000, Attrs: map[string]string{"idea_id": "i-1", "unit": "micro_cc"},
	}
}

func TestEncodingIsStable(t *testing.T) {
	t.Parallel()
	// The encoding is a contract: a chain written today must verify with
	// every later build. This pins the bytes of one entry.
	got := auditlog.Encode(entry(7))
	want := "FAE1\x017\x05stake\x1e2026-11-23T10:00:07.123456789Z\x03ada\x03ada\x08-1500000\x012" +
		"\x07idea_id\x03i-1\x04unit\x08micro_cc"
	require.Equal(t, want, string(got))
	// Cross-checked with an independent SHA-256 over 32 zero bytes and the bytes above.
	h := auditlog.ChainHash([32]byte{}, entry(7))
	require.Equal(t, "01877ac2ccd67babff8710347008b79351afb41aaa5296586e82291c32759a4f", hex.EncodeToString(h[:]))
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, e := range []auditlog.Entry{
		entry(1),
		{Seq: 0, Kind: "", At: time.Unix(0, 0).UTC()},
		{Seq: 9, Kind: "freeze", At: t0.In(time.FixedZone("x", 3600)), Actor: "signer-1", Attrs: map[string]string{"reason": "héllo\n"}},
	} {
		b := auditlog.Encode(e)
		got, err := auditlog.Decode(b)
		require.NoError(t, err)
		require.True(t, got.At.Equal(e.At))
		require.Equal(t, time.UTC, got.At.Location())
		e.At = e.At.UTC()
		if len(e.Attrs) == 0 {
			e.Attrs = nil
		}
		require.Equal(t, e, got)
		require.Equal(t, b, auditlog.Encode(got))
	}
}

func TestDecodeRefusesNonCanonical(t *testing.T) {
	t.Parallel()
	good := string(auditlog.Encode(entry(7)))
	for name, b := range map[string]string{
		"magic":          "FAE2" + good[4:],
		"leading zero":   "FAE1\x0207" + good[6:],
		"trailing bytes": good + "x",
		"truncated":      good[:len(good)-3],
		"unsorted attrs": "FAE1\x017\x05stake\x1e2026-11-23T10:00:07.123456789Z\x03ada\x03ada\x08-1500000\x012" +
			"\x04unit\x08micro_cc\x07idea_id\x03i-1",
		"duplicate key": "FAE1\x017\x05stake\x1e2026-11-23T10:00:07.123456789Z\x03ada\x03ada\x08-1500000\x012" +
			"\x04unit\x01a\x04unit\x01b",
		"non-UTC time":       "FAE1\x017\x05stake\x192026-11-23T10:00:07+01:00\x03ada\x03ada\x08-1500000\x010",
		"non-minimal varint": "FAE1\x81\x007" + good[6:],
		"negative seq":       "FAE1\x02-7" + good[6:],
		"bad utf8":           "FAE1\x017\x01\xff" + good[13:],
	} {
		_, err := auditlog.Decode([]byte(b))
		require.ErrorIs(t, err, auditlog.ErrNotCanonical, name)
	}
}

func TestLeaf(t *testing.T) {
	t.Parallel()
	// RFC 6962's leaf hash: SHA-256 over a zero byte and the record, so any
	// tlog implementation checks the log's proofs.
	want := sha256.Sum256(append([]byte{0}, auditlog.Encode(entry(7))...))
	require.Equal(t, want, auditlog.Leaf(entry(7)))
	require.Equal(t, sha256.Sum256(append([]byte{0}, "foundry audit log v1\n"...)), auditlog.LeafHash(auditlog.GenesisRecord))
}
