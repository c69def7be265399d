// Command modules prints Foundry's modules (allinone.Modules), in start
// order, as JSON: what each is called, the gRPC service it serves, whether
// it has a database and REST routes, the peers it declares and the modules
// whose addresses its own binary takes. deploy's tests
// hold the Makefile, the Dockerfile and the manifests against it, so a
// service added to allinone.Services is also asked for there.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
)

// module is one module's declaration, without its code.
type module struct {
	Name     string   `json:"name"`
	Service  string   `json:"service"`
	Database bool     `json:"database"`
	Routes   bool     `json:"routes"`
	Peers    []string `json:"peers"`
	// Dials are the modules the module's own binary may dial, each with
	// an address setting (app.Peers): its peers, the ledger (which
	// verifies tokens for every process), and itself when it serves gRPC.
	Dials []string `json:"dials"`
}

func main() {
	var out []module
	for _, m := range allinone.Modules() {
		out = append(out, module{Name: m.Name, Service: m.Service, Database: m.Migrations != nil, Routes: m.Routes != nil,
			Peers: append([]string{}, m.Peers...), Dials: app.Peers([]app.Module{m})})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "modules:", err)
		os.Exit(1)
	}
}
