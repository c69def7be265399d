// Package ledger is the ledger service as a module: contributor identity,
// value attribution and the credit economy, on its own schema.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"

	ledgerinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/handler"
	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/peer"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/gauges"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/lease"
	"github.com/foundryhq/foundry/services/platform/retention"
)

// Config holds the ledger's own settings.
type Config struct {
	RegisterRatePerMin  int
	SessionTTL          time.Duration
	GitHubWebhookSecret string
	GitHubAllowUnsigned bool
	ImpactWebhookSecret string

	// The credit economy.
	Signers          string
	CCPerUSD         float64
	RateOracleURL    string
	RatePollInterval time.Duration
	PledgeCCPerHour  float64
	ImpactUsageRate  float64

	// The audit log.
	AuditSigningKey       string
	AuditPreviousKeys     string
	AuditPreviousSigning  string
	AuditSequenceInterval time.Duration
	AuditBatch            int
	AuditScrubCycle       time.Duration
	AuditWitnesses        string

	// IdempotencyRetention is how long Idempotency-Key records are kept
	// (0: for ever).
	IdempotencyRetention time.Duration
}

func (c *Config) register(fs *config.FlagSet) {
	fs.Int(&c.RegisterRatePerMin, "register-rate-per-min", "FOUNDRY_REGISTER_RATE_PER_MIN", 30,
		"registrations allowed per client address per minute; 0 turns the limit off")
	fs.Duration(&c.SessionTTL, "session-ttl", "FOUNDRY_SESSION_TTL", identity.DefaultSessionTTL,
		"session token lifetime, renewed as the session is used; 0 means no expiry")
	fs.String(&c.GitHubWebhookSecret, "github-webhook-secret", "FOUNDRY_GITHUB_WEBHOOK_SECRET", "",
		"secret of the GitHub webhook: X-Hub-Signature-256 is required and verified; empty refuses every delivery unless -github-allow-unsigned")
	fs.Bool(&c.GitHubAllowUnsigned, "github-allow-unsigned", "FOUNDRY_GITHUB_ALLOW_UNSIGNED", false,
		"without a webhook secret, accept unsigned GitHub deliveries (anyone can then post contributions): for local use only")
	fs.String(&c.ImpactWebhookSecret, "impact-webhook-secret", "FOUNDRY_IMPACT_WEBHOOK_SECRET", "",
		"secret of the impact webhook (POST /api/webhooks/impact): X-Hub-Signature-256 over each usage delivery; empty refuses every delivery")
	fs.String(&c.Signers, "signers", "FOUNDRY_SIGNERS", "",
		"emergency-freeze signers as id:secret,id:secret, each secret at least 32 bytes; a freeze carries hex HMAC-SHA256(secret, signer_id|issued_at|nonce|reason); empty: nobody can freeze")
	fs.Float(&c.CCPerUSD, "cc-per-usd", "FOUNDRY_CC_PER_USD", 100, "the fixed exchange rate (mid), CC per USD, when no rate oracle is set")
	fs.String(&c.RateOracleURL, "rate-oracle-url", "FOUNDRY_RATE_ORACLE_URL", "",
		`HTTP rate oracle answering GET with {"cc_per_usd": <number>}; empty: the fixed rate`)
	fs.Duration(&c.RatePollInterval, "rate-poll-interval", "FOUNDRY_RATE_POLL_INTERVAL", time.Minute,
		"how often the rate source is read through the circuit breaker; 0 reads it only at startup")
	fs.Float(&c.PledgeCCPerHour, "pledge-cc-per-hour", "FOUNDRY_PLEDGE_CC_PER_HOUR", 500, "CC a pledged hour is worth (cc_equivalent)")
	fs.Float(&c.ImpactUsageRate, "impact-usage-rate", "FOUNDRY_IMPACT_USAGE_RATE", impact.DefaultUsageRate.Float64(),
		"attribution a usage record adds to each position on its idea, per unit of usage, as a share of the CC staked (0.01: 1 %)")
	fs.String(&c.AuditSigningKey, "audit-signing-key", "FOUNDRY_AUDIT_SIGNING_KEY", "",
		"Ed25519 key that signs the audit log's checkpoints, as a signed-note key (PRIVATE+KEY+<name>+<hash>+<key>; foundry audit keygen makes one); "+
			"required where the ledger runs beside other Foundry processes; a single-process run without it keeps one in <data-dir>/audit.key")
	fs.String(&c.AuditPreviousKeys, "audit-previous-verifier-keys", "FOUNDRY_AUDIT_PREVIOUS_VERIFIER_KEYS", "",
		"verifier keys the ledger signed the audit log's checkpoints with before FOUNDRY_AUDIT_SIGNING_KEY was rotated, comma-separated; "+
			"a checkpoint signed by any key but these and the signing key's is tampering")
	fs.String(&c.AuditPreviousSigning, "audit-previous-signing-key", "FOUNDRY_AUDIT_PREVIOUS_SIGNING_KEY", "",
		"for a rotation of FOUNDRY_AUDIT_SIGNING_KEY: the key it replaces, which countersigns the change the log records, so clients "+
			"that trust the old key follow it; remove it once the change is recorded")
	fs.Duration(&c.AuditSequenceInterval, "audit-sequence-interval", "FOUNDRY_AUDIT_SEQUENCE_INTERVAL", 200*time.Millisecond,
		"how often the audit sequencer looks for movements' entries committed on other replicas (this replica's own wake it at once)")
	fs.Int(&c.AuditBatch, "audit-batch", "FOUNDRY_AUDIT_BATCH", usecase.DefaultAuditBatch,
		"audit entries the sequencer integrates in one transaction at most")
	fs.String(&c.AuditWitnesses, "audit-witnesses", "FOUNDRY_AUDIT_WITNESSES", "",
		"witnesses asked to cosign each checkpoint, comma-separated VERIFIER_KEY@URL (foundry audit witness runs one); "+
			"while set, GET /api/audit/checkpoint serves the latest checkpoint they all cosigned")
	fs.Duration(&c.AuditScrubCycle, "audit-scrub-cycle", "FOUNDRY_AUDIT_SCRUB_CYCLE", usecase.DefaultScrubCycle,
		"how long the audit scrubber may take to re-check every entry, journal entry and balance once (a small log takes seconds); "+
			"0 turns the scrubber off")
	fs.Duration(&c.IdempotencyRetention, "ledger-idempotency-retention", "FOUNDRY_LEDGER_IDEMPOTENCY_RETENTION",
		usecase.DefaultIdempotencyRetention, "how long an Idempotency-Key's answer is kept for a retry; 0 keeps every key for ever")
}

// impactMaxUsageRate bounds FOUNDRY_IMPACT_USAGE_RATE: a unit of usage
// may earn a position at most its own stake again.
const impactMaxUsageRate = money.Micros(money.Scale)

// economy builds the credit economy's configuration from the settings.
func (c *Config) economy() (usecase.Config, error) {
	var out usecase.Config
	signers, err := parseSigners(c.Signers)
	if err != nil {
		return out, err
	}
	rate, err := money.FromFloat(c.CCPerUSD)
	if err != nil || rate <= 0 {
		return out, fmt.Errorf("FOUNDRY_CC_PER_USD: want a positive number with at most 6 decimals, got %v", c.CCPerUSD)
	}
	// The economy posts its quote around the rate: a rate it cannot quote
	// must stop the startup, not fail every money operation later.
	if _, err := credit.NewQuote(rate, credit.DefaultSpreadBP); err != nil {
		return out, fmt.Errorf("FOUNDRY_CC_PER_USD: %v CC per USD leaves no room for the spread; want more than 0.000001", c.CCPerUSD)
	}
	pledge, err := money.FromFloat(c.PledgeCCPerHour)
	if err != nil || pledge <= 0 {
		return out, fmt.Errorf("FOUNDRY_PLEDGE_CC_PER_HOUR: want a positive number with at most 6 decimals, got %v", c.PledgeCCPerHour)
	}
	usageRate, err := money.FromFloat(c.ImpactUsageRate)
	if err != nil || usageRate < 0 || usageRate > impactMaxUsageRate {
		return out, fmt.Errorf("FOUNDRY_IMPACT_USAGE_RATE: want a number from 0 to %s with at most 6 decimals (0: the default, 0.01), got %v",
			impactMaxUsageRate, c.ImpactUsageRate)
	}
	if c.AuditSequenceInterval <= 0 {
		return out, errors.New("FOUNDRY_AUDIT_SEQUENCE_INTERVAL: want a positive duration")
	}
	if c.AuditBatch <= 0 {
		return out, errors.New("FOUNDRY_AUDIT_BATCH: want a positive number")
	}
	if c.IdempotencyRetention < 0 {
		return out, errors.New("FOUNDRY_LEDGER_IDEMPOTENCY_RETENTION: want a duration (0 keeps every key)")
	}
	scrub := c.AuditScrubCycle
	switch {
	case scrub < 0:
		return out, errors.New("FOUNDRY_AUDIT_SCRUB_CYCLE: want a duration (0 turns the scrubber off)")
	case scrub == 0:
		scrub = -1 // off: usecase.Config's zero is the default
	case scrub < time.Second:
		return out, errors.New("FOUNDRY_AUDIT_SCRUB_CYCLE: want at least 1s (or 0 to turn the scrubber off)")
	}
	witnesses, err := parseWitnesses(c.AuditWitnesses)
	if err != nil {
		return out, err
	}
	out = usecase.Config{Signers: signers, Rates: usecase.FixedRate(rate), PledgeRate: pledge, ImpactUsageRate: usageRate,
		SessionTTL: c.SessionTTL,
		AuditBatch: c.AuditBatch, ScrubCycle: scrub, Witnesses: witnesses}
	if c.AuditSigningKey != "" {
		if out.AuditSigner, err = audit.NewSigner(c.AuditSigningKey); err != nil {
			return out, fmt.Errorf("FOUNDRY_AUDIT_SIGNING_KEY: %w", err)
		}
	}
	if c.AuditPreviousSigning != "" {
		if out.AuditPreviousSigner, err = audit.NewSigner(c.AuditPreviousSigning); err != nil {
			return out, fmt.Errorf("FOUNDRY_AUDIT_PREVIOUS_SIGNING_KEY: %w", err)
		}
	}
	for _, k := range strings.Split(c.AuditPreviousKeys, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if _, err := note.NewVerifier(k); err != nil {
			return out, fmt.Errorf("FOUNDRY_AUDIT_PREVIOUS_VERIFIER_KEYS: %q is not a note verifier key (<name>+<hash>+<key>): %w", k, err)
		}
		out.AuditPreviousKeys = append(out.AuditPreviousKeys, k)
	}
	if c.RateOracleURL != "" {
		u, err := url.Parse(c.RateOracleURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return out, errors.New("FOUNDRY_RATE_ORACLE_URL: want an http(s) URL")
		}
		out.Rates = usecase.HTTPRate{URL: c.RateOracleURL}
	}
	return out, nil
}

// parseSigners reads "id:secret,id:secret". Spaces around each id and
// secret are not part of them (a list written "ops: secret" means the
// secret without the space). A secret is an HMAC key, so it must be at
// least credit.MinSignerSecret bytes; an id may not hold "|", which
// separates the fields a freeze's signature covers.
func parseSigners(v string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		id, secret, ok := strings.Cut(pair, ":")
		id, secret = strings.TrimSpace(id), strings.TrimSpace(secret)
		if !ok || id == "" || secret == "" {
			return nil, errors.New("FOUNDRY_SIGNERS: want id:secret pairs separated by commas")
		}
		if strings.Contains(id, "|") {
			return nil, fmt.Errorf("FOUNDRY_SIGNERS: signer id %q must not contain |", id)
		}
		if len(secret) < credit.MinSignerSecret {
			return nil, fmt.Errorf("FOUNDRY_SIGNERS: the secret of signer %q is %d bytes; want at least %d (for example: openssl rand -hex 32)",
				id, len(secret), credit.MinSignerSecret)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("FOUNDRY_SIGNERS: signer %q appears twice", id)
		}
		out[id] = secret
	}
	return out, nil
}

// Module returns the ledger module.
func Module() app.Module {
	cfg := &Config{}
	// The gauges' interval is the process's, shared with the other
	// modules (gauges.Register), not one of this module's own settings.
	var refresh gauges.Setting
	return app.Module{
		Name:       "ledger",
		Service:    ledgerv1.LedgerService_ServiceDesc.ServiceName,
		Peers:      []string{"portfolio"},
		Routes:     ledgerv1.RegisterLedgerServiceHandler,
		Migrations: store.Migrations(),
		Flags: func(fs *config.FlagSet) {
			cfg.register(fs)
			refresh = gauges.Register(fs)
		},
		Start: func(_ context.Context, h *app.Host) error {
			switch {
			case cfg.GitHubWebhookSecret != "" && cfg.GitHubAllowUnsigned:
				h.Log.Warn("FOUNDRY_GITHUB_ALLOW_UNSIGNED is ignored: a GitHub webhook secret is set, so every delivery must be signed")
			case cfg.GitHubAllowUnsigned:
				h.Log.Warn("FOUNDRY_GITHUB_ALLOW_UNSIGNED=true and no GitHub webhook secret: POST /api/contributions/github accepts unsigned deliveries " +
					"from anyone, who can then post contributions of any cost in anyone's name; for local use only, set FOUNDRY_GITHUB_WEBHOOK_SECRET elsewhere")
			case cfg.GitHubWebhookSecret == "":
				h.Log.Info("no GitHub webhook secret: POST /api/contributions/github refuses every delivery until FOUNDRY_GITHUB_WEBHOOK_SECRET is set")
			}
			ecfg, err := cfg.economy()
			if err != nil {
				return err
			}
			every, err := refresh.Interval()
			if err != nil {
				return err
			}
			ecfg.Metrics = h.Metrics
			// The portfolio answers whether an idea exists (stakes, pledges,
			// previews). A ledger run without it still serves everything
			// else; those three answer 503 and the log says why.
			if conn, err := h.Dial("portfolio"); err != nil {
				h.Log.Warn("the portfolio is not reachable from this ledger: stakes, pledges and invest previews answer 503", zap.Error(err))
			} else {
				p := peer.NewPortfolio(conn)
				ecfg.Ideas, ecfg.Board = p, p
			}
			if len(ecfg.Signers) == 0 {
				h.Log.Info("no freeze signers configured (FOUNDRY_SIGNERS): POST /api/incidents/freeze refuses every request")
			}
			if ecfg.AuditSigner == nil {
				if ecfg.AuditSigner, err = localAuditKey(h); err != nil {
					return err
				}
			}
			if err := samePreviousName(ecfg); err != nil {
				return err
			}
			uc := usecase.New(h.DB, repos, ecfg)
			h.Go(func(ctx context.Context) { readRates(ctx, h.Log, uc, cfg.RatePollInterval) })
			economy := gauges.New(h.Metrics, economyGauges...)
			h.Go(func(ctx context.Context) { economy.Run(ctx, h.Log, every, readGauges(uc)) })
			h.Go(func(ctx context.Context) {
				runSequencer(ctx, h.Log, uc, lease.HolderID("ledger"), cfg.AuditSequenceInterval, cfg.AuditBatch)
			})
			if ecfg.Board != nil {
				h.Go(func(ctx context.Context) { runImpactPublisher(ctx, h.Log, uc, impactPublishEvery) })
			}
			if len(ecfg.Witnesses) > 0 {
				h.Go(func(ctx context.Context) { runWitnesses(ctx, h.Log, uc, lease.HolderID("ledger")) })
			}
			if cfg.IdempotencyRetention > 0 {
				h.Go((&retention.Retainer{What: "idempotency keys", Prune: uc.PruneIdempotencyKeys,
					Retention: cfg.IdempotencyRetention, Log: h.Log}).Run)
			}
			if cfg.AuditScrubCycle > 0 {
				h.Go(func(ctx context.Context) { runScrubber(ctx, h.Log, uc, lease.HolderID("ledger"), cfg.AuditScrubCycle) })
			} else {
				h.Log.Warn("FOUNDRY_AUDIT_SCRUB_CYCLE=0: the audit scrubber is off, so entries, journal lines and balances already " +
					"verified are never checked again")
			}
			srv := handler.New(uc, handler.Options{
				PublicReads:         h.Settings.PublicReads,
				RegisterRatePerMin:  cfg.RegisterRatePerMin,
				TrustedProxies:      h.Settings.Proxies,
				SessionTTL:          cfg.SessionTTL,
				GitHubWebhookSecret: cfg.GitHubWebhookSecret, ImpactWebhookSecret: cfg.ImpactWebhookSecret,
				GitHubAllowUnsigned: cfg.GitHubAllowUnsigned,
			})
			h.RegisterService(&ledgerv1.LedgerService_ServiceDesc, srv)
			h.RegisterService(&ledgerinternalv1.LedgerInternalService_ServiceDesc, srv)
			return nil
		},
	}
}

// AuditKeyFile is where a single-process run without
// FOUNDRY_AUDIT_SIGNING_KEY keeps the key it signs the audit log with,
// under its data directory, in the form foundry audit keygen prints (and
// make run writes): a FOUNDRY_AUDIT_SIGNING_KEY=... line.
const AuditKeyFile = "audit.key"

// samePreviousName refuses previous keys named otherwise than the signing
// key: a key's name is the log's origin, and a change of origin would
// make the log a new one to its clients and witnesses, which would then
// take any history under it as the first they see.
func samePreviousName(cfg usecase.Config) error {
	origin := cfg.AuditSigner.Origin()
	if p := cfg.AuditPreviousSigner; p != nil && p.Origin() != origin {
		return fmt.Errorf("FOUNDRY_AUDIT_PREVIOUS_SIGNING_KEY is named %q, but FOUNDRY_AUDIT_SIGNING_KEY %q: a key change keeps the log's "+
			"origin, so make the new key with the old one's name (foundry audit keygen --name %s)", p.Origin(), origin, p.Origin())
	}
	for _, k := range cfg.AuditPreviousKeys {
		if name, _, _ := strings.Cut(k, "+"); name != origin {
			return fmt.Errorf("FOUNDRY_AUDIT_PREVIOUS_VERIFIER_KEYS: %s is named %q, but FOUNDRY_AUDIT_SIGNING_KEY %q: a key change keeps "+
				"the log's origin, so make the new key with the old one's name (foundry audit keygen --name %s)", k, name, origin, name)
		}
	}
	return nil
}

// localAuditKey is the signing key of a ledger given none. A ledger that
// runs beside other Foundry processes (it names a peer's address) must be
// given one: each replica would otherwise sign with a key of its own,
// and every checkpoint another replica signed would be one no key it
// trusts signed — tampering. A single-process run (a laptop, the test
// harness) keeps one in <data-dir>/audit.key, made the first time, so its
// log keeps verifying across restarts; a data directory it cannot write
// costs only that, with a warning.
func localAuditKey(h *app.Host) (*audit.Signer, error) {
	for peer, addr := range h.Settings.PeerAddrs {
		if *addr != "" {
			return nil, fmt.Errorf("FOUNDRY_AUDIT_SIGNING_KEY (-audit-signing-key) is not set, and this ledger runs beside other Foundry "+
				"processes (the %s service at %s): give every ledger replica the same key (foundry audit keygen)", peer, *addr)
		}
	}
	path := filepath.Join(h.Settings.DataDir, AuditKeyFile)
	if raw, err := os.ReadFile(path); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "FOUNDRY_AUDIT_SIGNING_KEY=")
			if strings.HasPrefix(line, "PRIVATE+KEY+") {
				s, err := audit.NewSigner(line)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", path, err)
				}
				h.Log.Info("no FOUNDRY_AUDIT_SIGNING_KEY: signing the audit log with the key kept in "+path,
					zap.String("verifier_key", s.VerifierKey()))
				return s, nil
			}
		}
		return nil, fmt.Errorf("%s holds no audit signing key (a FOUNDRY_AUDIT_SIGNING_KEY=PRIVATE+KEY+... line): "+
			"remove it to make a new one, or set FOUNDRY_AUDIT_SIGNING_KEY", path)
	}
	skey, _, err := audit.GenerateKey(usecase.EphemeralAuditKeyName)
	if err != nil {
		return nil, err
	}
	s, err := audit.NewSigner(skey)
	if err != nil {
		return nil, err
	}
	err = os.MkdirAll(h.Settings.DataDir, 0o700)
	if err == nil {
		err = os.WriteFile(path, []byte("FOUNDRY_AUDIT_SIGNING_KEY="+skey+"\n# verifier key: "+s.VerifierKey()+"\n"), 0o600)
	}
	if err != nil {
		h.Log.Warn("no FOUNDRY_AUDIT_SIGNING_KEY: signing the audit log with a key made for this run (it could not be kept, "+
			"so clients cannot keep verifying after a restart)", zap.String("verifier_key", s.VerifierKey()), zap.Error(err))
		return s, nil
	}
	h.Log.Warn("no FOUNDRY_AUDIT_SIGNING_KEY: made an audit signing key and kept it in "+path+"; set one (foundry audit keygen) "+
		"where more than one process runs", zap.String("verifier_key", s.VerifierKey()))
	return s, nil
}

// repos builds all the ledger's repositories over one querier: the use
// cases open a transaction and write through these, so everything one use
// case writes commits together.
func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{
		Credit:      sqlstore.NewCredit(q),
		Audit:       sqlstore.NewAudit(q),
		Integrity:   sqlstore.NewIntegrity(q),
		Identity:    sqlstore.NewIdentity(q),
		Attribution: sqlstore.NewAttribution(q), Impact: sqlstore.NewImpact(q),
		Keys: idempotency.SQL{Q: q},
		Send: q.SendBatch,
	}
}
