// Package ledger is the ledger service as a module: contributor identity,
// value attribution and the credit economy, on its own schema.
package ledger

import (
	"context"
	"time"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/handler"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/config"
)

// Config holds the ledger's own settings.
type Config struct {
	RegisterRatePerMin  int
	SessionTTL          time.Duration
	GitHubWebhookSecret string
}

func (c *Config) register(fs *config.FlagSet) {
	fs.Int(&c.RegisterRatePerMin, "register-rate-per-min", "FOUNDRY_REGISTER_RATE_PER_MIN", 30,
		"registrations allowed per client address per minute; 0 turns the limit off")
	fs.Duration(&c.SessionTTL, "session-ttl", "FOUNDRY_SESSION_TTL", 0, "session token lifetime; 0 means no expiry")
	fs.String(&c.GitHubWebhookSecret, "github-webhook-secret", "FOUNDRY_GITHUB_WEBHOOK_SECRET", "",
		"secret of the GitHub webhook: X-Hub-Signature-256 is required and verified; empty accepts only unsigned deliveries")
}

// Module returns the ledger module.
func Module() app.Module {
	cfg := &Config{}
	return app.Module{
		Name:       "ledger",
		Service:    ledgerv1.LedgerService_ServiceDesc.ServiceName,
		Migrations: store.Migrations(),
		Flags:      cfg.register,
		Start: func(_ context.Context, h *app.Host) error {
			if cfg.GitHubWebhookSecret == "" {
				h.Log.Warn("no GitHub webhook secret: POST /api/contributions/github accepts unsigned deliveries from anyone; set FOUNDRY_GITHUB_WEBHOOK_SECRET")
			}
			srv := handler.New(sqlstore.New(h.DB), handler.Options{
				RegisterRatePerMin:  cfg.RegisterRatePerMin,
				SessionTTL:          cfg.SessionTTL,
				GitHubWebhookSecret: cfg.GitHubWebhookSecret,
			})
			h.RegisterService(&ledgerv1.LedgerService_ServiceDesc, srv)
			return nil
		},
	}
}
