package grpcserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/foundryhq/foundry/services/platform/grpcserver"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

// serve starts a server with opts and one method, test.Panicky/Ok, that
// answers OK; it returns the server's address.
func serve(t *testing.T, opts grpcserver.Options) string {
	t.Helper()
	server := grpcserver.New(zap.NewNop(), nil, opts)
	server.RegisterService(&grpc.ServiceDesc{ServiceName: "test.Panicky", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{
		method("Ok", func() error { return nil }),
	}}, struct{}{})
	server.Health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = server.Serve(lis) }()
	t.Cleanup(server.Stop)
	return lis.Addr().String()
}

func callOk(t *testing.T, conn *grpc.ClientConn, ctx context.Context) error {
	t.Helper()
	return conn.Invoke(ctx, "/test.Panicky/Ok", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
}

func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestServiceKeyIsRequired: a server with a service key answers only
// callers presenting exactly that key, on unary calls and on streams
// (reflection); health stays open for probes.
func TestServiceKeyIsRequired(t *testing.T) {
	addr := serve(t, grpcserver.Options{ServiceKey: "the-key", Reflection: true})
	ctx := context.Background()
	bare := dial(t, addr, grpc.WithTransportCredentials(insecure.NewCredentials()))

	err := callOk(t, bare, ctx)
	require.Equal(t, codes.Unauthenticated, status.Code(err))
	require.Contains(t, status.Convert(err).Message(), "FOUNDRY_SERVICE_KEY")

	wrong := metadata.AppendToOutgoingContext(ctx, servicecred.MetadataKey, "not-the-key")
	err = callOk(t, bare, wrong)
	require.Equal(t, codes.Unauthenticated, status.Code(err))
	require.Contains(t, status.Convert(err).Message(), "wrong service key")

	twice := metadata.AppendToOutgoingContext(ctx, servicecred.MetadataKey, "guess", servicecred.MetadataKey, "the-key")
	require.Equal(t, codes.Unauthenticated, status.Code(callOk(t, bare, twice)), "a second value beside the key is refused")

	right := metadata.AppendToOutgoingContext(ctx, servicecred.MetadataKey, "the-key")
	require.NoError(t, callOk(t, bare, right))

	withCreds := dial(t, addr, grpcserver.ClientOptions(grpcserver.NewClientMetrics(nil), grpcserver.ClientCredentials{ServiceKey: "the-key"})...)
	require.NoError(t, callOk(t, withCreds, ctx), "ClientOptions presents the key on every call")

	h, err := healthpb.NewHealthClient(bare).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err, "health answers without a key: Kubernetes probes cannot send one")
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, h.GetStatus())

	for name, c := range map[string]struct {
		ctx  context.Context
		code codes.Code
	}{"without the key": {ctx, codes.Unauthenticated}, "with the key": {right, codes.OK}} {
		stream, err := reflectionpb.NewServerReflectionClient(bare).ServerReflectionInfo(c.ctx)
		require.NoError(t, err, name)
		// A server that refuses the stream may end it before the request
		// is sent: Send then reports io.EOF, and Recv carries the status.
		if err := stream.Send(&reflectionpb.ServerReflectionRequest{
			MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			require.ErrorIs(t, err, io.EOF, name)
		}
		_, err = stream.Recv()
		require.Equal(t, c.code, status.Code(err), "reflection %s", name)
	}
}

// pki is a certificate authority and PEM files it signed, in a directory.
type pki struct {
	dir    string
	caKey  *ecdsa.PrivateKey
	caCert *x509.Certificate
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "foundry test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	p := &pki{dir: t.TempDir(), caKey: key, caCert: cert}
	p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *pki) write(t *testing.T, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return path
}

// issue signs a certificate for 127.0.0.1 usable as server and client, and
// returns its files with the CA's.
func (p *pki) issue(t *testing.T, name string) servicecred.TLSFiles {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return servicecred.TLSFiles{
		Cert: p.write(t, name+".pem", "CERTIFICATE", der),
		Key:  p.write(t, name+"-key.pem", "EC PRIVATE KEY", keyDER),
		CA:   filepath.Join(p.dir, "ca.pem"),
	}
}

// TestMutualTLS: with certificates configured, the server accepts a client
// whose certificate its CA signed and refuses one without a certificate,
// one from another CA, and a plaintext one.
func TestMutualTLS(t *testing.T) {
	ca := newPKI(t)
	serverTLS, _, err := ca.issue(t, "server").Configs()
	require.NoError(t, err)
	addr := serve(t, grpcserver.Options{TLS: serverTLS})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	metrics := grpcserver.NewClientMetrics(nil)

	_, clientTLS, err := ca.issue(t, "client").Configs()
	require.NoError(t, err)
	good := dial(t, addr, grpcserver.ClientOptions(metrics, grpcserver.ClientCredentials{TLS: clientTLS})...)
	require.NoError(t, callOk(t, good, ctx))

	noCert := clientTLS.Clone()
	noCert.Certificates = nil
	err = callOk(t, dial(t, addr, grpcserver.ClientOptions(metrics, grpcserver.ClientCredentials{TLS: noCert})...), ctx)
	require.Equal(t, codes.Unavailable, status.Code(err), "a client without a certificate fails the handshake: %v", err)

	_, foreignTLS, err := newPKI(t).issue(t, "stranger").Configs()
	require.NoError(t, err)
	foreignTLS.RootCAs = clientTLS.RootCAs // it trusts the server, but the server does not trust it
	err = callOk(t, dial(t, addr, grpcserver.ClientOptions(metrics, grpcserver.ClientCredentials{TLS: foreignTLS})...), ctx)
	require.Equal(t, codes.Unavailable, status.Code(err), "a certificate from another CA is refused: %v", err)

	err = callOk(t, dial(t, addr, grpc.WithTransportCredentials(insecure.NewCredentials())), ctx)
	require.Equal(t, codes.Unavailable, status.Code(err), "plaintext is refused: %v", err)
}

// TestTLSFilesNeedAllThree: half a TLS configuration is an error naming the
// settings, not a silent fallback to plaintext.
func TestTLSFilesNeedAllThree(t *testing.T) {
	files := newPKI(t).issue(t, "server")
	files.CA = ""
	require.True(t, files.Enabled())
	_, _, err := files.Configs()
	require.ErrorContains(t, err, "FOUNDRY_GRPC_TLS_CA")
	require.False(t, servicecred.TLSFiles{}.Enabled())
}
