package app

import (
	"context"
	"maps"
	"time"

	"go.uber.org/zap"

	platforminternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/platform/v1"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// storageProbeTimeout bounds the live check behind DescribeStorage, so a hung
// database makes the answer "fail" quickly instead of hanging the caller.
const storageProbeTimeout = 2 * time.Second

// storageService implements foundry.internal.platform.v1.StorageService: every
// process registers it when one of its modules has a database, so the ops
// service can report each service's backend and schema version without
// knowing how (or where) that service was deployed.
type storageService struct {
	platforminternalv1.UnimplementedStorageServiceServer

	dbs map[string]*database.DB // by module name
	log *zap.Logger
}

// DescribeStorage implements StorageService.DescribeStorage. Reading the
// schema version is the liveness check: it needs a working connection.
func (s *storageService) DescribeStorage(ctx context.Context, req *platforminternalv1.DescribeStorageRequest) (*platforminternalv1.DescribeStorageResponse, error) {
	if req.GetService() == "" {
		return nil, fault.Validation(fault.Field("service", "required: a module name such as ledger"))
	}
	db, ok := s.dbs[req.GetService()]
	if !ok {
		return nil, fault.New(fault.NotFound, "this process runs no %s module with a database", req.GetService())
	}
	resp := &platforminternalv1.DescribeStorageResponse{
		Service: req.GetService(),
		Backend: string(db.Engine()),
		Target:  db.Target(),
		Schema:  db.Schema(),
		Status:  "ok",
	}
	cctx, cancel := context.WithTimeout(ctx, storageProbeTimeout)
	defer cancel()
	v, err := migrate.Version(cctx, db)
	if err != nil {
		// The cause may name hosts or internals; the answer may be shown
		// to anyone, so it stays generic and the cause goes to the log.
		s.log.Warn("storage not answering", zap.String("module", req.GetService()), zap.Error(err))
		resp.Status, resp.Detail = "fail", "the database is not answering"
		return resp, nil
	}
	resp.SchemaVersion = int32(v)
	return resp, nil
}

// registerStorage serves StorageService for the modules' databases.
func (p *Process) registerStorage() {
	if len(p.dbs) == 0 {
		return
	}
	platforminternalv1.RegisterStorageServiceServer(p.grpc, &storageService{dbs: maps.Clone(p.dbs), log: p.Log.Named("storage")})
}
