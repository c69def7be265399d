// Package allinone assembles every Foundry module, so one process can run
// any set of them (-target=all by default): the laptop run, and the
// black-box tests.
package allinone

import (
	"github.com/foundryhq/foundry/gateway"
	"github.com/foundryhq/foundry/services/agent"
	"github.com/foundryhq/foundry/services/ledger"
	"github.com/foundryhq/foundry/services/ops"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/portfolio"
)

// Modules returns every module, in start order.
func Modules() []app.Module {
	return []app.Module{portfolio.Module(), ledger.Module(), agent.Module(), ops.Module(), gateway.Module()}
}
