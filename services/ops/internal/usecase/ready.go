package usecase

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/readiness"
	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// ProbeTimeout bounds each readiness probe and each part of the persistence
// report, so a hung dependency makes them fail fast instead of hang.
const ProbeTimeout = 2 * time.Second

// Peer is another service readiness and the persistence report depend on,
// as the use cases see it (the peer package adapts a gRPC connection).
type Peer struct {
	// Name is the module name ("ledger").
	Name string
	// Serving asks the peer's health check whether it serves; an error
	// when the peer cannot be reached.
	Serving func(ctx context.Context) (bool, error)
	// Storage describes the peer's database, asked of the peer's own
	// process; nil when the peer cannot be asked.
	Storage func(ctx context.Context) (ServiceStorage, error)
}

// ReadyResult is every readiness probe's result, in order: the ops
// database, the peers, then the telemetry database when there is one.
type ReadyResult struct {
	Checks []readiness.Result
}

// Ready decides whether Foundry can serve: ready when the ops database
// answers and every peer serves (its gRPC health check) and describes a
// database that answers now. A telemetry database is probed too, but only
// reported: telemetry is best-effort, so its outage must not take Foundry
// out of service. It returns every probe's result; when a required one
// failed, a fault.Unavailable naming the failing parts too.
// Failure details stay generic ("unreachable", "database not answering");
// the causes are logged.
func (a *App) Ready(ctx context.Context) (ReadyResult, error) {
	probes := []readiness.Probe{{Name: "ops database", Check: func(ctx context.Context) error {
		if err := a.db.Ping(ctx); err != nil {
			a.log.Warn("readiness: ops database not answering", zap.Error(err))
			return errors.New("not answering")
		}
		return nil
	}}}
	for _, p := range a.cfg.Peers {
		probes = append(probes, readiness.Probe{Name: p.Name, Check: func(ctx context.Context) error { return a.checkPeer(ctx, p) }})
	}
	if telemetry.IsDatabase(a.sink.Backend()) {
		probes = append(probes, readiness.Probe{Name: "telemetry", Optional: true, Check: func(ctx context.Context) error {
			if err := a.sink.Check(ctx); err != nil {
				a.log.Warn("readiness: telemetry database not answering (reported, not failing)", zap.Error(err))
				return errors.New("telemetry database not answering; events are being dropped")
			}
			return nil
		}})
	}
	results := readiness.Run(ctx, probes, ProbeTimeout)
	if failing := readiness.Failing(results); failing != "" {
		return ReadyResult{Checks: results}, fault.New(fault.Unavailable, "not ready: %s", failing)
	}
	return ReadyResult{Checks: results}, nil
}

// checkPeer probes one peer: its health status, then its database.
func (a *App) checkPeer(ctx context.Context, p Peer) error {
	serving, err := p.Serving(ctx)
	if err != nil {
		a.log.Warn("readiness: peer unreachable", zap.String("peer", p.Name), zap.Error(err))
		return errors.New("unreachable")
	}
	if !serving {
		return errors.New("not serving")
	}
	if p.Storage == nil {
		return nil
	}
	st, err := p.Storage(ctx)
	if err != nil {
		a.log.Warn("readiness: peer storage not described", zap.String("peer", p.Name), zap.Error(err))
		return errors.New("database not answering")
	}
	if st.Status != StatusOK {
		a.log.Warn("readiness: peer database not answering", zap.String("peer", p.Name), zap.String("detail", st.Detail))
		return errors.New("database not answering")
	}
	return nil
}
