package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/logging"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// Main is a binary's whole main function: it runs the modules until SIGINT or
// SIGTERM, or with the argument "migrate", applies their migrations and exits.
func Main(program string, modules ...Module) {
	if err := Run(context.Background(), program, modules, os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", program, err)
		os.Exit(1)
	}
}

// Run is Main without the exit: it returns when the process has stopped.
func Run(ctx context.Context, program string, modules []Module, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "migrate" {
		return runMigrate(ctx, program, modules, args[1:])
	}
	s, selected, rest, err := Parse(program, modules, args, Options{})
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q (the only command is migrate)", rest[0])
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := Start(ctx, s, selected)
	if err != nil {
		return err
	}
	printBanner(out, p, selected)
	select {
	case <-ctx.Done():
		p.Log.Info("signal received: stopping")
	case err := <-p.Done():
		p.Log.Error("server failed: stopping", zap.Error(err))
	}
	stop() // a second Ctrl-C now kills the process the default way
	return p.Stop(context.Background())
}

func printBanner(out io.Writer, p *Process, modules []Module) {
	names := make([]string, len(modules))
	for i, m := range modules {
		names[i] = m.Name
	}
	storage := "sqlite files in " + p.Settings.DataDir
	if p.Settings.DatabaseURL != "" {
		storage = "postgres"
	}
	fmt.Fprintf(out, "\nFoundry is running (%v, storage: %s)\n", names, storage)
	if p.HTTPAddr != "" {
		fmt.Fprintf(out, "  dashboard  http://%s/\n", p.HTTPAddr)
		fmt.Fprintf(out, "  REST API   http://%s/api\n", p.HTTPAddr)
		fmt.Fprintf(out, "  API docs   http://%s/api/docs/\n", p.HTTPAddr)
	}
	fmt.Fprintf(out, "  gRPC       %s\n", p.GRPCAddr)
	if p.AdminAddr != "" {
		fmt.Fprintf(out, "  metrics    http://%s/metrics\n", p.AdminAddr)
	}
	if p.Settings.AdminKeyPath != "" {
		fmt.Fprintf(out, "  admin key  %s (X-API-Key; the CLI uses it against this machine)\n", p.Settings.AdminKeyPath)
	}
	fmt.Fprintf(out, "Press Ctrl-C to stop.\n\n")
}

// runMigrate applies the selected modules' migrations and exits; this is what
// a Kubernetes migration Job runs.
func runMigrate(ctx context.Context, program string, modules []Module, args []string) error {
	s, selected, _, err := Parse(program, modules, args, Options{})
	if err != nil {
		return err
	}
	log, err := logging.New(s.LogFormat, s.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	for _, m := range selected {
		if m.Migrations == nil {
			continue
		}
		db, err := database.Open(ctx, database.Config{URL: s.DatabaseURL, DataDir: s.DataDir, Schema: m.Name})
		if err != nil {
			return err
		}
		n, err := migrate.Up(ctx, db, m.Migrations)
		if err != nil {
			db.Close()
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		v, err := migrate.Version(ctx, db)
		db.Close()
		if err != nil {
			return err
		}
		log.Info("migrated", zap.String("module", m.Name), zap.Int("applied", n), zap.Int("schema_version", v))
	}
	return nil
}
