package harness

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times /proc reports: USER_HZ, 100 on every
// Linux architecture Foundry is built for (getconf CLK_TCK).
const userHZ = 100

// Tick is the resolution of the CPU times /proc reports: a span shorter
// than it may read as none.
const Tick = time.Second / userHZ

// CPUSample is the CPU time each process of a server and the whole
// machine had used at one moment (or over a span: Sub, Add).
type CPUSample struct {
	Procs   []time.Duration // in the order of SampleCPU's pids
	Machine time.Duration
}

// Process is the server's CPU time: all its processes'.
func (s CPUSample) Process() time.Duration {
	var sum time.Duration
	for _, d := range s.Procs {
		sum += d
	}
	return sum
}

// Sub is the CPU time used between an earlier sample and s.
func (s CPUSample) Sub(earlier CPUSample) CPUSample {
	out := CPUSample{Procs: make([]time.Duration, len(s.Procs)), Machine: s.Machine - earlier.Machine}
	for i := range s.Procs {
		out.Procs[i] = s.Procs[i] - earlier.Procs[i]
	}
	return out
}

// Add sums two spans of the same processes.
func (s CPUSample) Add(o CPUSample) CPUSample {
	out := CPUSample{Procs: make([]time.Duration, max(len(s.Procs), len(o.Procs))), Machine: s.Machine + o.Machine}
	for i := range out.Procs {
		if i < len(s.Procs) {
			out.Procs[i] += s.Procs[i]
		}
		if i < len(o.Procs) {
			out.Procs[i] += o.Procs[i]
		}
	}
	return out
}

// SampleCPU reads each process's user+system time (/proc/PID/stat) and the
// machine's busy time (/proc/stat: every state but idle and iowait), so a
// round's CPU per request can be split into each server process's share
// and the rest (Postgres, the load generator, the kernel's network stack).
func SampleCPU(pids []int) (CPUSample, error) {
	var s CPUSample
	for _, pid := range pids {
		d, err := ProcessCPU(pid)
		if err != nil {
			return CPUSample{}, err
		}
		s.Procs = append(s.Procs, d)
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUSample{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return CPUSample{}, errors.New("unexpected /proc/stat")
	}
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return CPUSample{}, err
		}
		s.Machine += ticks(n)
	}
	return s, nil
}

// ProcessCPU is a process's user+system time.
func ProcessCPU(pid int) (time.Duration, error) {
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

func ticks(n int64) time.Duration { return time.Duration(n) * Tick }
