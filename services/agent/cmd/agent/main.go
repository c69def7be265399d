// Command agent runs the agent service alone (as deployed on Kubernetes).
// "agent migrate" applies its schema migrations and exits.
package main

import (
	"github.com/foundryhq/foundry/services/agent"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() { app.Main("agent", agent.Module()) }
