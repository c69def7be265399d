// Package peer adapts other Foundry services' gRPC clients to what the ops
// use cases need of them: whether a peer serves, and where its data lives.
package peer

import (
	"context"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	platforminternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/platform/v1"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
)

// Service is another Foundry service reached over gRPC.
type Service struct {
	// Name is the module name ("ledger").
	Name string
	// Service is the gRPC service name its health server reports.
	Service string
	Health  healthpb.HealthClient
	// Storage describes the peer's database (served by every process);
	// nil when the peer cannot be asked.
	Storage platforminternalv1.StorageServiceClient
	// Reconnect, when set, makes a connection that is backing off after a
	// failure retry at once, so readiness sees a returning peer on the next
	// probe rather than after the backoff.
	Reconnect func()
}

// Peer is the service as the use cases see it.
func (s Service) Peer() usecase.Peer {
	p := usecase.Peer{Name: s.Name, Serving: s.serving}
	if s.Storage != nil {
		p.Storage = s.describe
	}
	return p
}

func (s Service) reconnect() {
	if s.Reconnect != nil {
		s.Reconnect()
	}
}

// serving asks the peer's health check whether its service is SERVING.
func (s Service) serving(ctx context.Context) (bool, error) {
	s.reconnect()
	hr, err := s.Health.Check(ctx, &healthpb.HealthCheckRequest{Service: s.Service})
	if err != nil {
		return false, err
	}
	return hr.GetStatus() == healthpb.HealthCheckResponse_SERVING, nil
}

// describe asks the peer's process to describe its database.
func (s Service) describe(ctx context.Context) (usecase.ServiceStorage, error) {
	s.reconnect()
	sr, err := s.Storage.DescribeStorage(ctx, &platforminternalv1.DescribeStorageRequest{Service: s.Name})
	if err != nil {
		return usecase.ServiceStorage{}, err
	}
	return usecase.ServiceStorage{
		Service: s.Name, Backend: sr.GetBackend(), Schema: sr.GetSchema(), SchemaVersion: int(sr.GetSchemaVersion()),
		Target: sr.GetTarget(), Status: sr.GetStatus(), Detail: sr.GetDetail(),
	}, nil
}
