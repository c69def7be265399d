// Command ledger runs the ledger service alone (as deployed on Kubernetes).
// "ledger migrate" applies its schema migrations and exits.
package main

import (
	"github.com/foundryhq/foundry/services/ledger"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() { app.Main("ledger", ledger.Module()) }
