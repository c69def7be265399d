package grpcserver

import (
	"context"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// checkText refuses a request holding a string with a NUL character
// (Postgres text cannot store one: a NUL sent over direct gRPC was an
// internal error there, while SQLite stored it) or that is not UTF-8, as a
// validation error naming the field. The gateway checks REST bodies the
// same way before they get here, so the calls it forwards (the ones with
// the principal it verified and signed, authz.MetadataKey; the enforcer
// refuses a signature that does not verify) are not walked twice.
func checkText() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if v := metadata.ValueFromIncomingContext(ctx, authz.MetadataKey); len(v) != 1 || !authz.Signed(v[0]) {
			if msg, ok := req.(proto.Message); ok {
				if field := badText(msg.ProtoReflect(), ""); field != "" {
					return nil, fault.Validation(fault.Field(field, "must be UTF-8 without NUL characters"))
				}
			}
		}
		return handler(ctx, req)
	}
}

// badText is the path of the first string in m that is not usable text;
// "" when there is none.
func badText(m protoreflect.Message, path string) string {
	bad := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(fd.Name())
		if path != "" {
			name = path + "." + name
		}
		check := func(v protoreflect.Value, kind protoreflect.FieldDescriptor, at string) string {
			switch kind.Kind() {
			case protoreflect.StringKind:
				if s := v.String(); !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
					return at
				}
			case protoreflect.MessageKind, protoreflect.GroupKind:
				return badText(v.Message(), at)
			}
			return ""
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if bad = check(l.Get(i), fd, name); bad != "" {
					return false
				}
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if ks := k.String(); !utf8.ValidString(ks) || strings.ContainsRune(ks, 0) {
					bad = name
					return false
				}
				bad = check(mv, fd.MapValue(), name+"["+k.String()+"]")
				return bad == ""
			})
		default:
			bad = check(v, fd, name)
		}
		return bad == ""
	})
	return bad
}
