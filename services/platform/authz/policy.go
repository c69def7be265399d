package authz

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/wrapperspb"

	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// Policies are the declared policies by full gRPC method name
// ("/foundry.ledger.v1.LedgerService/Stake"), read from the proto
// descriptors linked into the binary. Every method of every foundry.*
// service must declare one: a method without a policy is an error, so a
// process serving it does not start.
func Policies() (map[string]*authzv1.Policy, error) {
	out := map[string]*authzv1.Policy{}
	var missing []string
	protoregistry.GlobalFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(f.Package()), "foundry.") {
			return true
		}
		for i := range f.Services().Len() {
			s := f.Services().Get(i)
			for j := range s.Methods().Len() {
				m := s.Methods().Get(j)
				name := "/" + string(s.FullName()) + "/" + string(m.Name())
				pol, _ := proto.GetExtension(m.Options(), authzv1.E_Policy).(*authzv1.Policy)
				if len(pol.GetAllow()) == 0 {
					missing = append(missing, name)
					continue
				}
				out[name] = pol
			}
		}
		return true
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("methods without an authorization policy (foundry.authz.v1.policy): %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// Enforcer is the one place policies are enforced: a gRPC server
// interceptor that finds the caller's principal, checks it against the
// method's policy and hands it to the handler (FromContext). It must run
// after the service credential is checked, since it believes the
// foundry-principal metadata of any caller that got that far.
type Enforcer struct {
	policies    map[string]*authzv1.Policy
	verifier    *Verifier
	trust       *Trust
	publicReads bool
}

// NewEnforcer returns the enforcer of every declared policy. publicReads
// lets anonymous callers use the methods that allow viewers; trust holds
// the gateways' keys a forwarded principal must be signed with (nil: no
// forwarded principal is believed, except one naming nobody).
func NewEnforcer(v *Verifier, publicReads bool, trust *Trust) (*Enforcer, error) {
	pols, err := Policies()
	if err != nil {
		return nil, err
	}
	return &Enforcer{policies: pols, verifier: v, trust: trust, publicReads: publicReads}, nil
}

// UnaryServerInterceptor enforces the policies of unary calls. Methods of
// other packages (grpc.health.v1, reflection) pass untouched.
func (e *Enforcer) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		pol, ok := e.policies[info.FullMethod]
		if !ok {
			return handler(ctx, req)
		}
		p, err := e.principal(ctx)
		if err != nil {
			return nil, err
		}
		msg, _ := req.(proto.Message)
		if err := Authorize(pol, p, msg, e.publicReads); err != nil {
			return nil, err
		}
		return handler(WithPrincipal(ctx, p), req)
	}
}

// StreamServerInterceptor refuses streaming calls to Foundry methods:
// Foundry declares none, and a policy's conditions read a single request.
func (e *Enforcer) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if _, ok := e.policies[info.FullMethod]; ok {
			return fault.New(fault.Unimplemented, "streaming Foundry methods are not served")
		}
		return handler(srv, ss)
	}
}

// principal is the caller: the principal a gateway verified and signed,
// else the raw credentials a direct caller sent, verified here, else the
// calling service itself (which servicecred let in by its key).
func (e *Enforcer) principal(ctx context.Context) (Principal, error) {
	// Each key is read alone (ValueFromIncomingContext): FromIncomingContext
	// copies the whole metadata map, on every call of every service.
	if v := metadata.ValueFromIncomingContext(ctx, MetadataKey); len(v) > 0 {
		if len(v) > 1 {
			return Principal{}, fault.New(fault.Unauthenticated, "more than one %s", MetadataKey)
		}
		p, err := e.trust.open(v[0])
		if err != nil {
			return Principal{}, fault.New(fault.Unauthenticated, "%s", err.Error())
		}
		return p, nil
	}
	first := func(key string) string {
		if v := metadata.ValueFromIncomingContext(ctx, key); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	creds := Credentials{Authorization: first(rpcmeta.AuthorizationKey), APIKey: first(rpcmeta.APIKeyKey)}
	if creds == (Credentials{}) {
		return peer, nil
	}
	p, err := e.verifier.Verify(ctx, creds)
	if err != nil {
		return Principal{}, fault.New(fault.Unavailable, "credentials cannot be verified now: try again shortly")
	}
	return p, nil
}

// Authorize decides whether p may make request req under pol; nil means
// yes. It may fill the policy's self field of req with the contributor's
// own id when the request left it empty. Refusals are Unauthenticated
// (401: no credential, or one that did not verify) or Forbidden (403: a
// verified principal without the role, or a contributor acting for
// another).
func Authorize(pol *authzv1.Policy, p Principal, req proto.Message, publicReads bool) error {
	allow := Allowed(pol, req)
	if slices.Contains(allow, Public) {
		return nil
	}
	switch p.Kind {
	case Invalid:
		return fault.New(fault.Unauthenticated, "%s", p.Problem)
	case Anonymous:
		if publicReads && slices.Contains(allow, Viewer) {
			return nil
		}
		return fault.New(fault.Unauthenticated, "this request needs a credential (%s): send Authorization: Bearer <token>, or the administrator key in X-API-Key",
			describe(allow))
	}
	if !slices.ContainsFunc(allow, p.Is) {
		return fault.New(fault.Forbidden, "the %s role may not do this: it needs %s", RoleName(p.Role), describe(allow))
	}
	if self := pol.GetSelf(); self != "" && p.Role == Contributor && req != nil {
		return bindSelf(req.ProtoReflect(), protoreflect.Name(self), p.ContributorID)
	}
	return nil
}

// Allowed is the roles pol allows for req: its conditions' when their
// field is true, else its own.
func Allowed(pol *authzv1.Policy, req proto.Message) []Role {
	allow := pol.GetAllow()
	for _, c := range pol.GetWhen() {
		if req != nil && holds(req.ProtoReflect(), c) {
			allow = c.GetAllow()
		}
	}
	return allow
}

// holds reports whether the condition holds for the request m: its
// string field equals c.equals, or (without equals) its bool field is
// true.
func holds(m protoreflect.Message, c *authzv1.Condition) bool {
	name := protoreflect.Name(c.GetField())
	if want := c.GetEquals(); want != "" {
		fd := m.Descriptor().Fields().ByName(name)
		return fd != nil && fd.Kind() == protoreflect.StringKind && m.Get(fd).String() == want
	}
	return boolField(m, name, c.GetIfUnset())
}

// boolField reads a bool or google.protobuf.BoolValue field; an unset
// BoolValue counts as ifUnset. A policy naming a field the message lacks is
// a programming error caught by the policy tests; here it reads as false.
func boolField(m protoreflect.Message, name protoreflect.Name, ifUnset bool) bool {
	fd := m.Descriptor().Fields().ByName(name)
	switch {
	case fd == nil:
		return false
	case fd.Kind() == protoreflect.BoolKind:
		return m.Get(fd).Bool()
	case fd.Message() != nil && fd.Message().FullName() == "google.protobuf.BoolValue":
		if !m.Has(fd) {
			return ifUnset
		}
		return m.Get(fd).Message().Interface().(*wrapperspb.BoolValue).GetValue()
	}
	return false
}

// bindSelf makes a contributor's request act for itself: an empty field
// is filled with its id, another id is refused.
func bindSelf(m protoreflect.Message, name protoreflect.Name, contributorID string) error {
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil || fd.Kind() != protoreflect.StringKind {
		return fault.New(fault.Internal, "policy names %s, which is no string field of %s", name, m.Descriptor().FullName())
	}
	switch got := m.Get(fd).String(); got {
	case "":
		m.Set(fd, protoreflect.ValueOfString(contributorID))
	case contributorID:
	default:
		return fault.New(fault.Forbidden, "a contributor acts only for itself: %s must be your own contributor id", name)
	}
	return nil
}

// describe lists roles for a refusal's detail: "operator or admin".
func describe(allow []Role) string {
	names := make([]string, 0, len(allow))
	for _, r := range allow {
		names = append(names, RoleName(r))
	}
	return strings.Join(names, " or ")
}
