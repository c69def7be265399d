// Command gateway serves the /api REST surface alone (as deployed on
// Kubernetes), in front of every service of allinone.Services: set
// -<service>-addr for each (FOUNDRY_<SERVICE>_ADDR), e.g. -ledger-addr.
// It lives here, not in the gateway's module, because the gateway serves
// the routes each service module declares, so its binary links the list.
package main

import (
	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() { app.Main("gateway", allinone.Gateway()) }
