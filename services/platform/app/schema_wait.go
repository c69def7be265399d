package app

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// schemaPoll is how often a process waiting for its schema looks again.
const schemaPoll = 2 * time.Second

// waitForSchema holds a module that does not migrate itself
// (FOUNDRY_AUTO_MIGRATE=false, the Kubernetes way) until its schema has
// every migration this build knows, for at most wait, and then refuses to
// start. So the order of a rollout does not matter: a pod of a new release
// started before its migration Job finished waits for it (logging what it
// waits for) instead of running against an older schema, whatever applies
// the manifests (kubectl, Argo CD waves, Flux). wait 0 checks once.
func waitForSchema(ctx context.Context, log *zap.Logger, db *database.DB, migrations fs.FS, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var logged time.Time
	for {
		pending, err := migrate.Pending(ctx, db, migrations)
		if err != nil {
			return fmt.Errorf("check the schema's migrations: %w", err)
		}
		if len(pending) == 0 {
			return nil
		}
		names := make([]string, len(pending))
		for i, m := range pending {
			names[i] = fmt.Sprintf("%04d_%s", m.Version, m.Name)
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("schema %s lacks %d migration(s) of this build (%s) after waiting %s: run foundry migrate "+
				"(the migration Job) first, or set FOUNDRY_AUTO_MIGRATE=true", db.Schema(), len(pending), strings.Join(names, ", "), wait)
		}
		if time.Since(logged) >= 30*time.Second {
			log.Info("waiting for the schema migration (FOUNDRY_AUTO_MIGRATE=false)", zap.Strings("pending", names),
				zap.Duration("gives_up_after", time.Until(deadline).Round(time.Second)))
			logged = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(schemaPoll, time.Until(deadline))):
		}
	}
}
