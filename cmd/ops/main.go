// Command ops runs the ops service alone: readiness, persistence, runtime
// telemetry, automation usage, the graph and the economy monitor. Its
// binary is here rather than under services/ops because, like the
// gateway's, it is built from the list of services (allinone.Services):
// ops reports the readiness of every other one.
package main

import (
	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() { app.Main("ops", allinone.Ops()) }
