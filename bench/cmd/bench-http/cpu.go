package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times /proc reports: USER_HZ, 100 on every
// Linux architecture Foundry is built for (getconf CLK_TCK).
const userHZ = 100

// cpuSample is the CPU time each process of a server and the whole
// machine had used at one moment (or over a span: sub, add).
type cpuSample struct {
	procs   []time.Duration // in the target's order
	machine time.Duration
}

// process is the server's CPU time: all its processes'.
func (s cpuSample) process() time.Duration {
	var sum time.Duration
	for _, d := range s.procs {
		sum += d
	}
	return sum
}

// sub is the CPU time used between an earlier sample and s.
func (s cpuSample) sub(earlier cpuSample) cpuSample {
	out := cpuSample{procs: make([]time.Duration, len(s.procs)), machine: s.machine - earlier.machine}
	for i := range s.procs {
		out.procs[i] = s.procs[i] - earlier.procs[i]
	}
	return out
}

// add sums two spans of the same processes.
func (s cpuSample) add(o cpuSample) cpuSample {
	out := cpuSample{procs: make([]time.Duration, max(len(s.procs), len(o.procs))), machine: s.machine + o.machine}
	for i := range out.procs {
		if i < len(s.procs) {
			out.procs[i] += s.procs[i]
		}
		if i < len(o.procs) {
			out.procs[i] += o.procs[i]
		}
	}
	return out
}

// sampleCPU reads each process's user+system time (/proc/PID/stat) and the
// machine's busy time (/proc/stat: every state but idle and iowait), so a
// round's CPU per request can be split into each server process's share
// and the rest (Postgres, the load generator, the kernel's network stack).
func sampleCPU(pids []int) (cpuSample, error) {
	var s cpuSample
	for _, pid := range pids {
		d, err := processCPU(pid)
		if err != nil {
			return cpuSample{}, err
		}
		s.procs = append(s.procs, d)
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuSample{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return cpuSample{}, errors.New("unexpected /proc/stat")
	}
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cpuSample{}, err
		}
		s.machine += ticks(n)
	}
	return s, nil
}

// processCPU is a process's user+system time.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it
	// start past its closing parenthesis. utime and stime are fields 14
	// and 15, so the 12th and 13th after it.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, errors.New("unexpected /proc/PID/stat")
	}
	var d time.Duration
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		d += ticks(n)
	}
	return d, nil
}

func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / userHZ }

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
		grpcAddr, admin := freeAddr(), freeAddr()
		extra := []string{"-target=" + target}
		for peer, addr := range peers {
			extra = append(extra, "-"+peer+"-addr="+addr)
		}
		p, err := startFoundry(bin, dbURL, freeAddr(), grpcAddr, admin, false, extra...)
		if err != nil {
			return nil, err
		}
		// Stopped at the end: the gateway needs the services running.
		defer p.stop()
		if err := waitHTTP(ctx, "http://"+admin+"/readyz", 60*time.Second); err != nil {
			return nil, fmt.Errorf("%s alone: %w\n%s", target, err, p.output())
		}
		time.Sleep(2 * time.Second)
		rss, err := residentMiB(p.cmd.Process.Pid)
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
