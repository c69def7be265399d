// Command gateway serves the /api REST surface in front of the four services
// (set -portfolio-addr, -ledger-addr, -agent-addr and -ops-addr).
package main

import (
	"github.com/foundryhq/foundry/gateway"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() { app.Main("gateway", gateway.Module()) }
