package grpcserver_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/grpcserver"
)

// TestCallsUseTheGeneratedCodec: a process built on grpcserver marshals
// with grpccodec on both ends of a call. Besides the registration, the wire
// shows it: a request string that is not UTF-8, which protobuf-go refuses
// to marshal in the client (an Internal error that names no field), crosses
// the hop and is refused by the server's text check as a validation error
// naming the field.
func TestCallsUseTheGeneratedCodec(t *testing.T) {
	t.Parallel()
	// By the type's name: importing grpccodec here would register it
	// whether or not grpcserver does.
	require.Equal(t, "grpccodec.Codec", fmt.Sprintf("%T", encoding.GetCodecV2("proto")))

	server := grpcserver.New(zap.NewNop(), nil, grpcserver.Options{})
	server.RegisterService(&grpc.ServiceDesc{ServiceName: "test.Ideas", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{{
		MethodName: "Create",
		Handler: func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(portfoliov1.CreateIdeaRequest)
			if err := dec(in); err != nil {
				return nil, err
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/test.Ideas/Create"}, func(_ context.Context, req any) (any, error) {
				return page(req.(*portfoliov1.CreateIdeaRequest).GetName(), 50), nil
			})
		},
	}}}, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = server.Serve(lis) }()
	t.Cleanup(server.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpcserver.ClientOptions(grpcserver.NewClientMetrics(nil), grpcserver.ClientCredentials{})...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })

	// A page past gRPC's buffer-pooling threshold, both ways intact.
	got := &portfoliov1.ListIdeasResponse{}
	require.NoError(t, conn.Invoke(context.Background(), "/test.Ideas/Create", &portfoliov1.CreateIdeaRequest{Name: "Solar kettle"}, got))
	require.True(t, proto.Equal(page("Solar kettle", 50), got), "got %v", got)

	err = conn.Invoke(context.Background(), "/test.Ideas/Create", &portfoliov1.CreateIdeaRequest{Name: "kettle \xff"}, got)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	var fields []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	require.Equal(t, []string{"name"}, fields)
}

// page is n ideas named after name.
func page(name string, n int) *portfoliov1.ListIdeasResponse {
	r := &portfoliov1.ListIdeasResponse{Summary: &portfoliov1.IdeaSummary{TotalIdeas: int32(n)}}
	for i := range n {
		r.Ideas = append(r.Ideas, &portfoliov1.Idea{
			Id: fmt.Sprintf("idea-%04d", i), Name: fmt.Sprintf("%s %d", name, i), Score: float64(i) / 3,
			Tags: []string{"energy", "outdoor"}, Stage: portfoliov1.Stage_specced, CreatedAt: "2026-11-25T10:00:00Z",
		})
	}
	return r
}
