package database

import (
	"net/url"
	"strings"
)

// redacted replaces a secret value.
const redacted = "xxxxx"

// secretParam reports whether a connection parameter holds a secret. libpq
// takes passwords in two parameters, password and sslpassword (the client
// key's passphrase); anything else naming a password or a secret is masked
// too, since showing a harmless value costs less than leaking a secret.
func secretParam(name string) bool {
	name = strings.ToLower(name)
	return strings.Contains(name, "password") || strings.Contains(name, "secret")
}

// Redact returns a Postgres connection string fit to show or log: the
// password of a URL's user info, the password and sslpassword (and any other
// password or secret) query parameters of a URL, and the same keys of a
// key=value DSN ("host=db password='s e c' ...") become xxxxx. url.Redacted
// masks only the user info, so a URL with ?password=... would print the
// password in full. A string that is neither form is returned masked whole.
func Redact(conn string) string {
	trimmed := strings.TrimSpace(conn)
	if trimmed == "" {
		return conn
	}
	if hasScheme(trimmed) {
		return redactURL(trimmed)
	}
	if strings.Contains(trimmed, "=") {
		return redactKeyValue(trimmed)
	}
	return trimmed // a bare name (a SQLite path) carries no secret
}

// hasScheme reports whether s starts with a URL scheme and "://"
// ("postgres://..."). A "://" elsewhere (inside a key=value password or
// application_name) does not make a URL: read as one, the text before it
// would be shown as the "scheme", password included.
func hasScheme(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" {
		return false
	}
	for i, c := range scheme {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		// Not parseable, so the parts cannot be told apart: show only the
		// scheme.
		scheme, _, _ := strings.Cut(raw, "://")
		return scheme + "://" + redacted
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
	}
	if u.RawQuery != "" {
		q, err := url.ParseQuery(u.RawQuery)
		if err != nil {
			u.RawQuery = redacted
		} else {
			masked := false
			for k, vs := range q {
				if secretParam(k) {
					for i := range vs {
						vs[i] = redacted
					}
					masked = true
				}
			}
			if masked {
				u.RawQuery = q.Encode()
			}
		}
	}
	return u.String()
}

// redactKeyValue masks the secret values of a libpq key=value string, whose
// values are bare words or single-quoted with backslash escapes.
func redactKeyValue(s string) string {
	var out strings.Builder
	i := 0
	for i < len(s) {
		// Copy whitespace.
		for i < len(s) && isSpace(s[i]) {
			out.WriteByte(s[i])
			i++
		}
		if i >= len(s) {
			break
		}
		// The key, up to '=' or whitespace.
		start := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[start:i]
		out.WriteString(key)
		// Spaces around '=' are allowed.
		for i < len(s) && isSpace(s[i]) {
			out.WriteByte(s[i])
			i++
		}
		if i >= len(s) || s[i] != '=' {
			continue
		}
		out.WriteByte('=')
		i++
		for i < len(s) && isSpace(s[i]) {
			out.WriteByte(s[i])
			i++
		}
		// The value: quoted or a bare word.
		vstart := i
		if i < len(s) && s[i] == '\'' {
			i++
			for i < len(s) && s[i] != '\'' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			i = min(i+1, len(s)) // the closing quote (or the end of a broken string)
		} else {
			for i < len(s) && !isSpace(s[i]) {
				i++
			}
		}
		if secretParam(key) {
			out.WriteString(redacted)
		} else {
			out.WriteString(s[vstart:i])
		}
	}
	return out.String()
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}
