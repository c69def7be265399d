package requestid_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/foundryhq/foundry/services/platform/requestid"
)

func TestValid(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"abc-123":                    true,
		"9f86d081884c7d659a2feaa0c5": true,
		"trace:1.2_3":                true,
		"":                           false,
		"has space":                  false,
		"line\nbreak":                false,
		strings.Repeat("a", 128):     true,
		strings.Repeat("a", 129):     false,
		"é":                          false,
	} {
		require.Equal(t, want, requestid.Valid(id), "%q", id)
	}
	a, b := requestid.New(), requestid.New()
	require.Len(t, a, 32)
	require.True(t, requestid.Valid(a))
	require.NotEqual(t, a, b)
}

// TestPropagation: a server with the interceptor sees the caller's id, or
// makes one; a client with the interceptor passes the context's id on.
func TestPropagation(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 4)
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(requestid.UnaryServerInterceptor(),
		func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			seen <- requestid.From(ctx)
			return h(ctx, req)
		}))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(requestid.UnaryClientInterceptor()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	client := healthpb.NewHealthClient(conn)

	_, err = client.Check(requestid.With(context.Background(), "from-the-gateway"), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	require.Equal(t, "from-the-gateway", <-seen)

	_, err = client.Check(context.Background(), &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	made := <-seen
	require.Len(t, made, 32, "no id sent: the server makes one")

	bad := metadata.AppendToOutgoingContext(context.Background(), requestid.Key, "not valid; has spaces")
	_, err = client.Check(bad, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	got := <-seen
	require.NotEqual(t, "not valid; has spaces", got)
	require.True(t, requestid.Valid(got))
}
