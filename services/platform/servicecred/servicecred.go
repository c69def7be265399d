// Package servicecred decides who may call a Foundry gRPC server: the
// other parts of Foundry, and people with a credential of their own. A
// part of Foundry proves it is one by presenting the shared service key in
// the request metadata, or by a client certificate that the server's
// certificate authority signed (mutual TLS), or both when both are
// configured. A person presents a session or API token (authorization) or
// the administrator key (x-api-key) instead, exactly as over REST; authz
// verifies it, so this package lets such a call by without the service
// key, unless it also carries a forwarded principal, which only a part of
// Foundry may send. Without either a call is refused here.
//
// The key travels in its own metadata entry, never in "authorization": the
// gateway forwards the REST client's Authorization header (its session
// token) to the services as that entry, and the two must not mix. The
// gateway forwards no client header under the key's name (its header
// matcher passes only the headers it names), so a REST client cannot
// present a key of its own.
package servicecred

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// MetadataKey is the metadata entry that carries the service key.
const MetadataKey = "foundry-service-key"

// open reports whether a method needs no credential: only grpc.health.v1,
// whose status is no secret and which Kubernetes' gRPC probes call without
// any way to add metadata.
func open(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/"+healthpb.Health_ServiceDesc.ServiceName+"/")
}

// check returns Unauthenticated unless ctx carries key or one of the
// accepted keys (a rotation's other key, below). With an empty key every
// caller passes: the server then relies on mutual TLS alone.
func check(ctx context.Context, key string, accepted []string, fullMethod string) error {
	if key == "" || open(fullMethod) {
		return nil
	}
	// One key's values, not FromIncomingContext's copy of the whole map
	// (every call of every service passes here).
	vals := metadata.ValueFromIncomingContext(ctx, MetadataKey)
	if len(vals) == 0 {
		if ownCredential(ctx) {
			return nil
		}
		return status.Error(codes.Unauthenticated,
			"a Foundry service takes a caller's own credential (a token in authorization metadata, or the administrator key in x-api-key), "+
				"or the service key (FOUNDRY_SERVICE_KEY) in "+MetadataKey+" metadata from another part of Foundry")
	}
	// Exactly one value, and it must match: a second value would mean a
	// caller (or a proxy) added its own guess beside the real key.
	if len(vals) != 1 || !Matches(vals[0], key, accepted) {
		return status.Error(codes.Unauthenticated, "wrong service key: every Foundry process must share the same FOUNDRY_SERVICE_KEY")
	}
	return nil
}

// ownCredential reports whether a call carries a person's credential and
// no forwarded principal (which would take precedence over it, and which
// only a holder of the service key may send).
func ownCredential(ctx context.Context) bool {
	has := func(key string) bool { return len(metadata.ValueFromIncomingContext(ctx, key)) > 0 }
	return (has(rpcmeta.AuthorizationKey) || has(rpcmeta.APIKeyKey)) && !has(rpcmeta.PrincipalKey)
}

// Matches reports whether given is key or one of accepted, comparing each
// in constant time and all of them whatever matched first, so the answer's
// timing tells nothing about which key, or how much of one, was right.
// Empty keys match nothing.
//
// Accepted keys are how a shared key rotates without downtime: first every
// process accepts the new key beside the one it presents (…_KEY=old,
// …_KEY_ACCEPT=new), then presents the new one and accepts the old
// (…_KEY=new, …_KEY_ACCEPT=old), then drops the old; at each step a
// process not yet restarted still talks to one that is.
func Matches(given, key string, accepted []string) bool {
	ok := 0
	for _, k := range append([]string{key}, accepted...) {
		if k != "" {
			ok |= subtle.ConstantTimeCompare([]byte(given), []byte(k))
		}
	}
	return ok == 1
}

// UnaryServerInterceptor refuses unary calls without the service key (or
// one of the accepted ones).
func UnaryServerInterceptor(key string, accepted ...string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := check(ctx, key, accepted, info.FullMethod); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// StreamServerInterceptor refuses streams without the service key (server
// reflection and health watches are streams).
func StreamServerInterceptor(key string, accepted ...string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if err := check(ss.Context(), key, accepted, info.FullMethod); err != nil {
			return err
		}
		return handler(srv, ss)
	}
}

// keyCredentials attaches the key to every call of a connection.
type keyCredentials struct {
	// md is the metadata every call presents, made once: gRPC reads the
	// map a call's credentials return into its own and keeps nothing of
	// it, so one map serves every call instead of one made per call.
	md     map[string]string
	secure bool
}

// PerRPC returns call credentials presenting key. They travel over
// plaintext too (insecure loopback, or a cluster network the NetworkPolicy
// closes); with TLS configured they travel encrypted.
func PerRPC(key string, overTLS bool) credentials.PerRPCCredentials {
	return keyCredentials{md: map[string]string{MetadataKey: key}, secure: overTLS}
}

func (k keyCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return k.md, nil
}

func (k keyCredentials) RequireTransportSecurity() bool { return k.secure }

// TLSFiles are the PEM files of mutual TLS between Foundry processes: the
// process's certificate and key (presented as server and as client) and
// the certificate authority that signed every Foundry process's
// certificate.
type TLSFiles struct {
	Cert, Key, CA string
}

// Enabled reports whether any file is given.
func (f TLSFiles) Enabled() bool { return f.Cert != "" || f.Key != "" || f.CA != "" }

// load reads the files; all three are required once any is given, since
// half a configuration would silently weaken the other side's checks.
func (f TLSFiles) load() (tls.Certificate, *x509.CertPool, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return tls.Certificate{}, nil, errors.New("mutual TLS needs all of FOUNDRY_GRPC_TLS_CERT, FOUNDRY_GRPC_TLS_KEY and FOUNDRY_GRPC_TLS_CA")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("load the gRPC certificate: %w", err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("read the gRPC certificate authority: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("%s holds no PEM certificate", f.CA)
	}
	return cert, pool, nil
}

// Configs reads the files once and returns both sides. The server presents
// the certificate and accepts only clients whose certificate the CA
// signed; the client trusts only servers the CA signed, for the name the
// peer is dialled by, and presents the same certificate.
func (f TLSFiles) Configs() (server, client *tls.Config, err error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, nil, err
	}
	server = &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
	client = &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
	}
	return server, client, nil
}
