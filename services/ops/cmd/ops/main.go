// Command ops runs the ops service alone (as deployed on Kubernetes).
// "ops migrate" applies its schema migrations and exits.
package main

import (
	"github.com/foundryhq/foundry/services/ops"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() { app.Main("ops", ops.Module()) }
