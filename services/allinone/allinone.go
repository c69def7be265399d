// Package allinone assembles every Foundry module, so one process can run
// any set of them (-target=all by default): the laptop run, and the
// black-box tests.
//
// Services is the one list of Foundry's services. What else lists them
// derives from it or is held against it: the gateway serves the routes of
// each, every process takes the addresses of the peers its modules declare
// (app.Peers), and deploy's tests check the Makefile, the Dockerfile, the
// kustomization and the network policies against it (go run ./cmd/modules
// prints it). docs/architecture.md, "Adding a service", walks through it.
package allinone

import (
	"github.com/foundryhq/foundry/gateway"
	"github.com/foundryhq/foundry/services/agent"
	"github.com/foundryhq/foundry/services/ledger"
	"github.com/foundryhq/foundry/services/ops"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/portfolio"
)

// Services returns every service module, in start order. Ops comes last
// and is given the others, whose readiness it reports.
func Services() []app.Module {
	services := []app.Module{portfolio.Module(), ledger.Module(), agent.Module()}
	return append(services, ops.Module(services...))
}

// Ops returns the ops module reporting on every other service, as its own
// binary (cmd/ops) runs it.
func Ops() app.Module {
	s := Services()
	return s[len(s)-1]
}

// Modules returns every module, in start order: the services, then the
// gateway in front of them.
func Modules() []app.Module {
	services := Services()
	return append(services, gateway.Module(services...))
}

// Gateway returns the gateway in front of every service, as the gateway's
// own binary (cmd/gateway) runs it.
func Gateway() app.Module {
	return gateway.Module(Services()...)
}
