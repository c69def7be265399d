// Command portfolio runs the portfolio service alone (as deployed on Kubernetes).
// "portfolio migrate" applies its schema migrations and exits.
package main

import (
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/portfolio"
)

func main() { app.Main("portfolio", portfolio.Module()) }
