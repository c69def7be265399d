package gateway

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// crossOrigin refuses a browser's state-changing request sent from another
// site (net/http's CrossOriginProtection: the Sec-Fetch-Site header every
// current browser sends, else Origin against Host), with Foundry's JSON
// 403. Requests without either header (curl, the CLI, a worker, GitHub's
// webhook) are no browser's and pass. It replaces refusing non-JSON bodies
// as the cross-site defence, which also refused legitimate body-less
// actions sent with a form's Content-Type.
func crossOrigin(next http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSONError(w, http.StatusForbidden, ErrorBody{Detail: "cross-origin request refused: " +
			"a page of another site may not change anything here (send the request from Foundry's own pages, or from a program)"})
	}))
	return p.Handler(next)
}

// hostRule says which Host headers the gateway answers. DNS rebinding
// points a name the attacker controls at 127.0.0.1, so the visitor's
// browser treats a Foundry on the visitor's laptop as the attacker's own
// site, same origin and all: only the Host header tells them apart.
type hostRule struct {
	// allowed are FOUNDRY_ALLOWED_HOSTS' names (lowercase, ports stripped).
	allowed []string
	// loopbackOnly accepts loopback hosts alone (localhost, 127.0.0.0/8,
	// ::1): the gateway listens on loopback and no list is configured.
	loopbackOnly bool
}

// newHostRule builds the rule from FOUNDRY_ALLOWED_HOSTS (comma-separated
// host names; empty: none) and the address the gateway listens on.
func newHostRule(allowedHosts, listenAddr string) hostRule {
	var r hostRule
	for h := range strings.SplitSeq(allowedHosts, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			r.allowed = append(r.allowed, stripPort(h))
		}
	}
	if len(r.allowed) == 0 {
		host, _, err := net.SplitHostPort(listenAddr)
		r.loopbackOnly = err == nil && isLoopbackHost(host)
	}
	return r
}

// check says why host is refused, or "" when it is served.
func (r hostRule) check(host string) string {
	name := stripPort(strings.ToLower(host))
	switch {
	case len(r.allowed) > 0 && !slices.Contains(r.allowed, name):
		return fmt.Sprintf("host %q is not served here (FOUNDRY_ALLOWED_HOSTS)", host)
	case r.loopbackOnly && !isLoopbackHost(name):
		return fmt.Sprintf("host %q is not served here: this Foundry listens on loopback and answers only localhost, 127.0.0.1 or [::1] (FOUNDRY_ALLOWED_HOSTS adds names)", host)
	}
	return ""
}

// allowedHosts refuses a request whose Host the rule does not serve.
func allowedHosts(rule hostRule) middleware {
	return func(next http.Handler) http.Handler {
		if len(rule.allowed) == 0 && !rule.loopbackOnly {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if why := rule.check(r.Host); why != "" {
				writeJSONError(w, http.StatusForbidden, ErrorBody{Detail: why})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// stripPort is a Host value without its port ("[::1]:8080" -> "::1").
func stripPort(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// isLoopbackHost reports whether a host name or address is this machine.
func isLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
