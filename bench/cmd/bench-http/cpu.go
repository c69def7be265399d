package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"

	"github.com/foundryhq/foundry/bench/internal/harness"
)

// serviceRSS starts each service, and the gateway, in a process of its
// own against the database (already migrated) and reports each one's
// resident set once it is ready and has idled for a moment: what a
// Kubernetes pod of that service holds at rest.
func serviceRSS(ctx context.Context, bin, dbURL string) ([]string, error) {
	targets, err := moduleNames(ctx)
	if err != nil {
		return nil, err
	}
	peers := map[string]string{}
	var lines []string
	for _, target := range targets {
		grpcAddr, admin := harness.FreeAddr(), harness.FreeAddr()
		extra := []string{"-target=" + target}
		for peer, addr := range peers {
			extra = append(extra, "-"+peer+"-addr="+addr)
		}
		p, err := harness.StartFoundry(bin, dbURL, harness.FreeAddr(), grpcAddr, admin, false, extra...)
		if err != nil {
			return nil, err
		}
		// Stopped at the end: the gateway needs the services running.
		defer p.Stop()
		if err := harness.WaitHTTP(ctx, "http://"+admin+"/readyz", 60*time.Second); err != nil {
			return nil, fmt.Errorf("%s alone: %w\n%s", target, err, p.Output())
		}
		time.Sleep(2 * time.Second)
		rss, err := harness.ResidentMiB(p.Pid())
		if err != nil {
			return nil, err
		}
		lines = append(lines, fmt.Sprintf("%s %.1f MiB", target, rss))
		peers[target] = grpcAddr
	}
	return lines, nil
}

// moduleNames are Foundry's modules in start order (the services, then the
// gateway), as cmd/modules prints them from allinone.Services: the bench
// measures whatever services there are without its own list of them. Run
// from the repository's root, as make bench-http does.
func moduleNames(ctx context.Context) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "run", "./modules")
	cmd.Dir = "cmd"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("list the modules (go run ./modules in cmd/): %w\n%s", err, stderr.String())
	}
	var mods []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(out, &mods); err != nil {
		return nil, fmt.Errorf("list the modules: %w", err)
	}
	names := make([]string, len(mods))
	for i, m := range mods {
		names[i] = m.Name
	}
	return names, nil
}
