package usecase

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// Statuses of the persistence report.
const (
	StatusOK       = "ok"
	StatusFail     = "fail"
	StatusOff      = "off"
	StatusDegraded = "degraded"
)

// ServiceStorage says where one service's data lives.
type ServiceStorage struct {
	// Service is the module name ("ledger").
	Service       string
	Backend       string
	Schema        string
	SchemaVersion int
	// Target is where the data lives (a redacted URL or a file); empty
	// unless the report shows targets.
	Target string
	// Status is StatusOK or StatusFail, and Detail says why.
	Status string
	Detail string
}

// TelemetryStorage says where runtime telemetry goes.
type TelemetryStorage struct {
	Backend string
	// Target is empty unless the report shows targets.
	Target string
	// Status is StatusOK, StatusFail (Detail says why) or StatusOff.
	Status string
	Detail string
}

// PersistenceResult is every service's backend and schema version and where
// telemetry goes.
type PersistenceResult struct {
	// Services are the peers, in order, then ops itself.
	Services  []ServiceStorage
	Telemetry TelemetryStorage
	// Status is StatusOK, or StatusDegraded when a service fails.
	Status string
	// TargetsShown says the targets are filled in.
	TargetsShown bool
}

// Persistence reports every service's backend and schema version (asked of
// each service's own process, so the report is true however Foundry is
// deployed) and where telemetry goes. A failing service shows as
// StatusFail and makes the overall status StatusDegraded; the telemetry
// sink never changes the overall status (a file sink next to a database is
// a supported configuration, not a fault). Where the data lives (hosts,
// database names, file paths) helps an attacker more than a health check,
// so the targets are filled in only when showTargets is set (the caller is
// an administrator).
func (a *App) Persistence(ctx context.Context, showTargets bool) (PersistenceResult, error) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	peers := a.cfg.Peers
	services := make([]ServiceStorage, len(peers)+1)
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() { services[i] = a.describePeer(ctx, p) })
	}
	wg.Go(func() { services[len(peers)] = a.describeSelf(ctx) })
	tel := TelemetryStorage{Backend: a.sink.Backend(), Target: a.sink.Target(), Status: StatusOK}
	wg.Go(func() {
		if tel.Backend == telemetry.Off {
			tel.Status = StatusOff
			return
		}
		if err := a.sink.Check(ctx); err != nil {
			a.log.Warn("persistence: telemetry sink failing", zap.Error(err))
			tel.Status, tel.Detail = StatusFail, "the telemetry sink is not answering"
		}
	})
	wg.Wait()
	out := PersistenceResult{Services: services, Telemetry: tel, Status: StatusOK, TargetsShown: showTargets}
	for i := range out.Services {
		if out.Services[i].Status != StatusOK {
			out.Status = StatusDegraded
		}
		if !showTargets {
			out.Services[i].Target = ""
		}
	}
	if !showTargets {
		out.Telemetry.Target = ""
	}
	return out, nil
}

func (a *App) describePeer(ctx context.Context, p Peer) ServiceStorage {
	out := ServiceStorage{Service: p.Name, Status: StatusFail, Detail: "unreachable"}
	if p.Storage == nil {
		return out
	}
	st, err := p.Storage(ctx)
	if err != nil {
		a.log.Warn("persistence: peer storage not described", zap.String("peer", p.Name), zap.Error(err))
		return out
	}
	st.Service = p.Name
	return st
}

func (a *App) describeSelf(ctx context.Context) ServiceStorage {
	out := ServiceStorage{Service: "ops", Backend: string(a.db.Engine()), Target: a.db.Target(), Schema: a.db.Schema(), Status: StatusOK}
	v, err := migrate.Version(ctx, a.db)
	if err != nil {
		a.log.Warn("persistence: ops database not answering", zap.Error(err))
		out.Status, out.Detail = StatusFail, "the database is not answering"
		return out
	}
	out.SchemaVersion = v
	return out
}
