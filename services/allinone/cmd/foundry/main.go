// Command foundry runs any set of Foundry modules in one process; by default
// all of them (-target=all) on embedded SQLite under ./data.
// "foundry migrate" applies the selected modules' migrations and exits.
package main

import (
	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
)

func main() { app.Main("foundry", allinone.Modules()...) }
