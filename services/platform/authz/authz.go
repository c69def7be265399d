// Package authz is who may do what in Foundry: the caller (a Principal),
// the roles, the policy every RPC declares in its proto options
// (foundry.authz.v1.policy), and the one gRPC interceptor that enforces them.
//
// A credential is verified once, at the edge: the gateway turns a request's
// Authorization or X-API-Key header into a Principal (Verifier, which caches
// verified tokens briefly) and sends it to the services as the
// foundry-principal metadata, signed with the key only gateways hold
// (Forwarder). A service believes that metadata only from a holder of the
// service credential (servicecred runs before this package's interceptor)
// and only with a gateway's signature (Trust), so neither a client nor a
// holder of the service key alone can name a principal. A direct gRPC
// caller sends its raw credential instead, as authorization or x-api-key
// metadata; the service then verifies it itself with the same Verifier.
package authz

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// Role is a principal's role or a role a policy allows.
type Role = authzv1.Role

// The roles, by their proto names.
const (
	Public      = authzv1.Role_ROLE_PUBLIC
	Viewer      = authzv1.Role_ROLE_VIEWER
	Contributor = authzv1.Role_ROLE_CONTRIBUTOR
	Worker      = authzv1.Role_ROLE_WORKER
	Operator    = authzv1.Role_ROLE_OPERATOR
	Admin       = authzv1.Role_ROLE_ADMIN
	Service     = authzv1.Role_ROLE_SERVICE
)

// RoleName is a role as the API spells it: "viewer", "operator"; "none"
// for no role (an anonymous caller).
func RoleName(r Role) string {
	if r == authzv1.Role_ROLE_UNSPECIFIED {
		return "none"
	}
	return strings.ToLower(strings.TrimPrefix(r.String(), "ROLE_"))
}

// ParseRole reads a role's API name; ok is false for an unknown name and
// for the pseudo-roles public and service, which no credential holds.
func ParseRole(name string) (Role, bool) {
	r, ok := authzv1.Role_value["ROLE_"+strings.ToUpper(name)]
	if !ok || name != strings.ToLower(name) || Role(r) == Public || Role(r) == Service || r == 0 {
		return 0, false
	}
	return Role(r), true
}

// Includes reports whether a principal holding have may act as want. Roles
// nest: admin includes operator, operator includes worker, and every role
// (the service's too) includes viewer. Contributor stands beside worker:
// neither includes the other, and nothing includes contributor, because
// only a contributor has CC of its own.
func Includes(have, want Role) bool {
	if have == want {
		return true
	}
	switch want {
	case Viewer:
		return have == Contributor || have == Worker || have == Operator || have == Admin || have == Service
	case Worker:
		return have == Operator || have == Admin
	case Operator:
		return have == Admin
	}
	return false
}

// Kind says what sort of credential a principal presented.
type Kind string

// The kinds of principal.
const (
	// Anonymous sent no credential.
	Anonymous Kind = "anonymous"
	// Session is a contributor's session token (POST /api/onboarding/register).
	Session Kind = "session"
	// Token is an API token (POST /api/tokens).
	Token Kind = "token"
	// AdminKey is the administrator key (X-API-Key).
	AdminKey Kind = "admin"
	// Peer is another Foundry service calling without a user's credential.
	Peer Kind = "service"
	// Invalid sent a credential that did not verify; Problem says why.
	Invalid Kind = "invalid"
)

// Principal is who a request comes from.
type Principal struct {
	Kind Kind
	// Role is what the principal may do; zero for Anonymous and Invalid.
	Role Role
	// ID identifies the credential: an API token's id, a session's token
	// hash, "admin", "service". A worker's claims record it.
	ID string
	// ContributorID is a session's contributor.
	ContributorID string
	// Name is a token's name or a session contributor's handle.
	Name string
	// ExpiresAt is when the credential stops working; zero when never.
	ExpiresAt time.Time
	// Problem is why an Invalid credential was refused (shown in the 401).
	Problem string
}

// Is reports whether the principal holds role r (or one that includes it).
func (p Principal) Is(r Role) bool { return p.Role != 0 && Includes(p.Role, r) }

// Actor names the principal in records, audit entries and idempotency
// scopes: the contributor of a session, "token:<id>" for an API token (ids
// are unique, names need not be), "admin", "service".
func (p Principal) Actor() string {
	switch p.Kind {
	case Session:
		return p.ContributorID
	case Token:
		return "token:" + p.ID
	case AdminKey:
		return "admin"
	case Peer:
		return "service"
	}
	return "anonymous"
}

// The principals that need no look-up.
var (
	anonymous = Principal{Kind: Anonymous}
	admin     = Principal{Kind: AdminKey, Role: Admin, ID: "admin", Name: "admin"}
	peer      = Principal{Kind: Peer, Role: Service, ID: "service", Name: "service"}
)

// invalid is a refused credential.
func invalid(problem string) Principal { return Principal{Kind: Invalid, Problem: problem} }

type principalKey struct{}

// WithPrincipal returns ctx carrying p, as the interceptor hands it to
// handlers.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext is the request's principal; Anonymous when none was set (a
// handler called directly, in a test).
func FromContext(ctx context.Context) Principal {
	if p, ok := ctx.Value(principalKey{}).(Principal); ok {
		return p
	}
	return anonymous
}

// MetadataKey is the gRPC metadata that carries a verified principal from
// the gateway to a service, signed (Forwarder). The gateway never forwards
// a client's header of that name.
const MetadataKey = rpcmeta.PrincipalKey

// Encode is p as the MetadataKey value: URL query encoding, which keeps any
// name printable ASCII as metadata requires.
func (p Principal) Encode() string {
	v := url.Values{"kind": {string(p.Kind)}}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	if p.Role != 0 {
		v.Set("role", RoleName(p.Role))
	}
	set("id", p.ID)
	set("contributor", p.ContributorID)
	set("name", p.Name)
	set("problem", p.Problem)
	if !p.ExpiresAt.IsZero() {
		v.Set("expires", strconv.FormatInt(p.ExpiresAt.UnixMicro(), 10))
	}
	return v.Encode()
}

// Decode reads a principal that Encode wrote.
func Decode(s string) (Principal, error) {
	v, err := url.ParseQuery(s)
	if err != nil {
		return Principal{}, fmt.Errorf("decode principal: %w", err)
	}
	p := Principal{Kind: Kind(v.Get("kind")), ID: v.Get("id"), ContributorID: v.Get("contributor"),
		Name: v.Get("name"), Problem: v.Get("problem")}
	switch p.Kind {
	case Anonymous, Session, Token, AdminKey, Peer, Invalid:
	default:
		return Principal{}, fmt.Errorf("decode principal: unknown kind %q", p.Kind)
	}
	if name := v.Get("role"); name != "" {
		r, ok := authzv1.Role_value["ROLE_"+strings.ToUpper(name)]
		if !ok {
			return Principal{}, fmt.Errorf("decode principal: unknown role %q", name)
		}
		p.Role = Role(r)
	}
	if e := v.Get("expires"); e != "" {
		us, err := strconv.ParseInt(e, 10, 64)
		if err != nil {
			return Principal{}, fmt.Errorf("decode principal: expires: %w", err)
		}
		p.ExpiresAt = time.UnixMicro(us).UTC()
	}
	return p, nil
}
