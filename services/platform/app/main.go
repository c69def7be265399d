package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
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
		if errors.As(err, new(UsageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// Run is Main without the exit: it returns when the process has stopped.
func Run(ctx context.Context, program string, modules []Module, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "migrate" {
		return runMigrate(ctx, program, modules, args[1:], out)
	}
	s, selected, rest, err := Parse(program, modules, args, Options{})
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return UsageError{fmt.Errorf("unexpected argument %q (the only command is migrate)", rest[0])}
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
	// People call gRPC with their own credential, as over REST; the
	// service key, generated or not, is the processes' own and is never
	// shown (docs/cli.md, "Two transports").
	fmt.Fprintf(out, "  gRPC       %s (metadata authorization: Bearer <token>, or x-api-key)\n", p.GRPCAddr)
	if p.AdminAddr != "" {
		fmt.Fprintf(out, "  metrics    http://%s/metrics\n", p.AdminAddr)
	}
	if p.Settings.AdminKeyPath != "" {
		fmt.Fprintf(out, "  admin key  %s (X-API-Key; the CLI uses it against this machine)\n", p.Settings.AdminKeyPath)
	}
	fmt.Fprintf(out, "Press Ctrl-C to stop.\n\n")
}

// UsageError is a mistake on the command line: Main exits 2 for it, as
// for a bad flag, and 1 for a failure.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// runMigrate runs "migrate [up|status] [flags]": up (the default) applies
// the selected modules' pending migrations, which is what a Kubernetes
// migration Job runs; status lists each module's schema version and
// pending migrations and changes nothing. Flags come after the action; any
// other argument is a usage error, never ignored: "migrate status
// -data-dir X" once applied everything to ./data, because flag parsing
// stopped at "status" and the rest was dropped.
func runMigrate(ctx context.Context, program string, modules []Module, args []string, out io.Writer) error {
	action := "up"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	if action != "up" && action != "status" {
		return UsageError{fmt.Errorf("unknown migrate action %q: want %s migrate [up|status] [flags]", action, program)}
	}
	s, selected, rest, err := Parse(program, modules, args, Options{})
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return UsageError{fmt.Errorf("unexpected argument %q: want %s migrate [up|status] [flags]", rest[0], program)}
	}
	log, err := logging.New(s.LogFormat, s.LogLevel)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	var owner *migrate.Owner
	if s.DatabaseOwnerURL != "" {
		if owner, err = ownerOf(s, selected, action); err != nil {
			return err
		}
	}
	for _, m := range selected {
		if m.Migrations == nil {
			continue
		}
		db, err := database.Open(ctx, database.Config{URL: s.DatabaseURL, DataDir: s.DataDir, Schema: m.Name})
		if err != nil {
			return err
		}
		err = migrateModule(ctx, db, m, action, out)
		if err == nil && owner != nil {
			if err = migrate.EnsureOwner(ctx, db, *owner); err == nil {
				_, err = fmt.Fprintf(out, "%s: schema %s owned by role %s, closed to every other role\n", m.Name, db.Schema(), owner.Role)
			}
		}
		db.Close()
		if err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
	}
	return nil
}

// ownerOf reads -database-owner-url: the role a single module's schema is
// handed to after its migrations, on Postgres. Several modules would share
// one role, which is what a role per service is meant to prevent.
func ownerOf(s *Settings, selected []Module, action string) (*migrate.Owner, error) {
	var withSchema []string
	for _, m := range selected {
		if m.Migrations != nil {
			withSchema = append(withSchema, m.Name)
		}
	}
	switch {
	case action != "up":
		return nil, UsageError{errors.New("-database-owner-url goes with migrate up: status changes nothing")}
	case s.DatabaseURL == "":
		return nil, UsageError{errors.New("-database-owner-url needs Postgres (-database-url): SQLite has no roles")}
	case len(withSchema) != 1:
		return nil, UsageError{fmt.Errorf("-database-owner-url names one service's role: select one module with -target (selected: %s)",
			strings.Join(withSchema, ", "))}
	}
	o, err := migrate.OwnerFromURL(s.DatabaseOwnerURL)
	if err != nil {
		return nil, UsageError{err}
	}
	return &o, nil
}

// migrateModule runs action on one module's database and says what it did
// on out, one line.
func migrateModule(ctx context.Context, db *database.DB, m Module, action string, out io.Writer) error {
	if action == "status" {
		pending, err := migrate.Pending(ctx, db, m.Migrations)
		if err != nil {
			return err
		}
		v := 0
		if all, err := migrate.Load(m.Migrations, db.Engine()); err == nil && len(all) > len(pending) {
			v, err = migrate.Version(ctx, db)
			if err != nil {
				return err
			}
		}
		names := make([]string, len(pending))
		for i, p := range pending {
			names[i] = fmt.Sprintf("%04d_%s", p.Version, p.Name)
		}
		list := ""
		if len(names) > 0 {
			list = ": " + strings.Join(names, ", ")
		}
		_, err = fmt.Fprintf(out, "%s (%s): schema version %d, %d pending%s\n", m.Name, db.Target(), v, len(pending), list)
		return err
	}
	n, err := migrate.Up(ctx, db, m.Migrations)
	if err != nil {
		return err
	}
	v, err := migrate.Version(ctx, db)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s (%s): applied %d, schema version %d\n", m.Name, db.Target(), n, v)
	return err
}
