package cli

import (
	"context"
	"errors"
	"net/http"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/foundryhq/foundry/services/platform/servicecred"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// grpcTransport calls the services directly with the caller's own
// credential as metadata; with a service key configured it also presents
// that, as a Foundry process does.
type grpcTransport struct {
	addr string
	conn *grpc.ClientConn
}

func newGRPCTransport(addr, serviceKey string) (*grpcTransport, error) {
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent("foundry-cli"),
		// A short command has no use for gRPC's backoff of up to two
		// minutes between connection attempts: status --wait must see a
		// server that came up within a moment.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 250 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second,
		}),
	}
	if serviceKey != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(servicecred.PerRPC(serviceKey, false)))
	}
	conn, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, usagef("--grpc-addr %q: %v", addr, err)
	}
	return &grpcTransport{addr: addr, conn: conn}, nil
}

func (g *grpcTransport) target() string { return g.addr }

func (g *grpcTransport) close() error { return g.conn.Close() }

func (g *grpcTransport) call(ctx context.Context, o op, in, out proto.Message, md map[string]string) ([]byte, error) {
	for k, v := range md {
		ctx = metadata.AppendToOutgoingContext(ctx, k, v)
	}
	if err := g.conn.Invoke(ctx, o.grpc, in, out); err != nil {
		return nil, g.refusal(err)
	}
	if o.text != "" {
		// The text the gateway would have answered.
		m, fd := textField(o, out)
		return []byte(m.Get(fd).String()), nil
	}
	// The JSON the gateway would have answered.
	return renderMessage(responseBody(o, out))
}

// refusal turns a gRPC status into what REST would have said: the
// gateway's HTTP status, the message as detail, the field violations.
// Unavailable or a deadline without a Foundry service's own mark is the
// connection failing, not a service answering.
func (g *grpcTransport) refusal(err error) error {
	s := status.Convert(err)
	fromService := false
	var fields []fieldError
	for _, d := range s.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			fromService = fromService || d.GetDomain() == wire.ErrorDomain
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				fields = append(fields, fieldError{Field: v.GetField(), Message: v.GetDescription()})
			}
		}
	}
	if !fromService {
		switch s.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
			return &unreachableError{target: g.addr, err: errors.New(s.Message())}
		}
	}
	code := wire.HTTPStatus(s.Code())
	detail := s.Message()
	if detail == "" {
		detail = http.StatusText(code)
	}
	return &apiError{Status: code, Detail: detail, Fields: fields}
}
