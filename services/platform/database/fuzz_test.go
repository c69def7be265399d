package database_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
)

// plainPairs keeps the well-formed key=value words of s (no quotes, no
// escapes, no empty key or value), so the connection strings built around
// a password are ones libpq reads the way the test means.
func plainPairs(s string) string {
	var out []string
	for _, w := range strings.Fields(s) {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" || v == "" || strings.ContainsAny(w, `'\`) {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// FuzzRedact checks the connection-string redactor never lets a password
// through, in any form libpq takes one (URL user info, URL query
// parameter, key=value bare or quoted), whatever the other parameters say,
// and never panics on any string.
func FuzzRedact(f *testing.F) {
	f.Add(uint8(0), "host=db user=u", "s3cretpass", "sslmode=disable")
	f.Add(uint8(0), "host=db", "p4ss://word", "application_name=a://b")
	f.Add(uint8(1), "host=db", "se cr'et\\x", "")
	f.Add(uint8(1), "", "a://bcdefgh", "")
	f.Add(uint8(2), "", "p@ss/w:rd?#", "sslmode=require")
	f.Add(uint8(3), "", "s&e=c%ret", "x=%zz")
	f.Add(uint8(0), "host=db", "hunter2hunter2", "application_name=x://y")
	f.Fuzz(func(t *testing.T, form uint8, before, secret, after string) {
		_ = database.Redact(before + secret + after) // any string: no panic
		if len(secret) < 8 || strings.Contains(secret, "xxxxx") {
			return // too short to tell from the rest of the string
		}
		var conn string
		switch form % 4 {
		case 0: // key=value, bare word
			if strings.ContainsAny(secret, " \t\n\r\f\v'\\") {
				return
			}
			conn = strings.TrimSpace(plainPairs(before) + " password=" + secret + " " + plainPairs(after))
		case 1: // key=value, quoted with escapes
			q := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(secret)
			conn = strings.TrimSpace(plainPairs(before) + " password='" + q + "' " + plainPairs(after))
		case 2: // URL user info
			conn = "postgres://" + url.UserPassword("u", secret).String() + "@db:5432/f?" + url.PathEscape(after)
		case 3: // URL query parameter
			conn = "postgres://u@db/f?password=" + url.QueryEscape(secret) + "&" + after
		}
		rest := strings.Replace(conn, secret, "", 1)
		for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			if strings.Contains(rest, form) {
				return // the secret's text also appears where it is no secret
			}
		}
		got := database.Redact(conn)
		for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			require.NotContains(t, got, form, "Redact(%q) = %q", conn, got)
		}
	})
}
