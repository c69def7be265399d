package auditlog_test

import (
	"bytes"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/auditlog"
)

// FuzzDecode checks the decoder never panics and that the encoding is
// canonical: whatever Decode accepts, Encode gives back byte for byte.
func FuzzDecode(f *testing.F) {
	f.Add(auditlog.Encode(entry(1)))
	f.Add(auditlog.Encode(auditlog.Entry{}))
	f.Add(auditlog.Encode(auditlog.Entry{Seq: 3, Kind: "repair", At: t0, Actor: "admin", Subject: "audit",
		Attrs: map[string]string{"first_divergent": "2", "last_verified": "1", "reason": "x"}}))
	f.Add([]byte("FAE1"))
	f.Add([]byte("FAE1\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := auditlog.Decode(b)
		if err != nil {
			require.ErrorIs(t, err, auditlog.ErrNotCanonical)
			return
		}
		require.Equal(t, b, auditlog.Encode(e), "accepted bytes must be the canonical encoding")
	})
}

// FuzzEncode checks every entry round-trips through its encoding and that
// distinct entries never share one (so a hash over the encoding covers
// every field).
func FuzzEncode(f *testing.F) {
	f.Add(int64(1), "stake", int64(1_700_000_000_000_000_000), "ada", "ada", int64(-5), "k", "v", "k2", "v2")
	f.Add(int64(0), "", int64(0), "", "", int64(0), "", "", "", "")
	f.Fuzz(func(t *testing.T, seq int64, kind string, nanos int64, actor, subject string, amount int64, k1, v1, k2, v2 string) {
		for _, s := range []string{kind, actor, subject, k1, v1, k2, v2} {
			if !utf8.ValidString(s) {
				return // entries hold UTF-8 text only
			}
		}
		if seq < 0 {
			seq = -(seq + 1)
		}
		e := auditlog.Entry{Seq: seq, Kind: kind, At: time.Unix(0, nanos).UTC(), Actor: actor, Subject: subject,
			Amount: amount, Attrs: map[string]string{k1: v1, k2: v2}}
		b := auditlog.Encode(e)
		got, err := auditlog.Decode(b)
		require.NoError(t, err)
		require.Equal(t, e.Attrs, got.Attrs)
		require.True(t, e.At.Equal(got.At))
		require.Equal(t, []any{e.Seq, e.Kind, e.Actor, e.Subject, e.Amount}, []any{got.Seq, got.Kind, got.Actor, got.Subject, got.Amount})

		// Moving a byte between two adjacent text fields changes the encoding.
		if actor != "" {
			other := e
			other.Actor, other.Subject = actor[:len(actor)-1], actor[len(actor)-1:]+subject
			if other.Actor != e.Actor || other.Subject != e.Subject {
				require.False(t, bytes.Equal(b, auditlog.Encode(other)))
			}
		}
	})
}
