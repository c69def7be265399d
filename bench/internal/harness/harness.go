// Package harness is what Foundry's HTTP benchmarks share (bench-http,
// bench-scale): a scratch Postgres database, Foundry started on it as a
// child process, calls to its REST API, a route driven at a concurrency
// with its latencies, and the CPU time and resident set of the processes
// that serve it, read from /proc (Linux).
package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
)

// AdminKey is the administrator key Foundry is started with
// (StartFoundry): seeds deposit, create tokens and read admin-only answers
// with it.
const AdminKey = "bench-admin-key-0123456789abcdef0123"

// The gateway's principal key pair (foundry gateway keygen made it for the
// benchmark): a gateway started apart from the services (-split) signs
// with it, and they believe it.
const (
	principalSigningKey  = "PRIVATE+KEY+foundry-bench-gateway+22411bf5+ARweCNGSo3s98dERGfX/jzHhm15+gv22QjHb4MBOme4U"
	principalVerifierKey = "foundry-bench-gateway+22411bf5+AXDOwhEvZ7hfwm60CUCT63dOBZkrmiRuzRVEBTvsB3rV"
)

// EnvOr is the environment variable k, or def when it is unset or empty.
func EnvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// program is the running command's name (bench-http, bench-scale: go run
// names its binary after the package's directory), for its messages and
// temporary files.
func program() string { return filepath.Base(os.Args[0]) }

// ScratchDatabase creates a fresh database on the server of base and
// returns its URL and a function that drops it.
func ScratchDatabase(ctx context.Context, base string) (string, func(), error) {
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", Redact(base), err)
	}
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	name := "foundry_bench_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close(ctx)
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		if _, err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "%s: drop database %s: %v\n", program(), name, err)
		}
		_ = admin.Close(context.Background())
	}
	return u.String(), drop, nil
}

// Redact is a URL with its password hidden, for output.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// FreeAddr is a loopback address with a port free at the time of the call.
func FreeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().String()
}
