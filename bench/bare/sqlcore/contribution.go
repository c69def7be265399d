package sqlcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// ---------------------------------------------------------------------------
// 1. POST /api/contributions
//
// Mirrors ledger handler.CreateContribution (handler/attribution.go) →
// usecase.App.CreateContribution (usecase/attribution.go) →
// sqlstore.Identity.EnsureContributor (sqlstore/identity.go) and
// sqlstore.Attribution.AddContribution (sqlstore/attribution.go), in one
// transaction. One round trip: BEGIN, the contributor upsert, the asset
// UPDATE, the contribution INSERT, COMMIT.
//
// Deliberate difference: Foundry checks the UPDATE's row count in Go and, at
// zero, reads the asset (SELECT 1 FROM assets) to tell 404 from 400 before
// rolling back. Inside one batch the UPDATE is wrapped in a CTE that divides
// by its row count, so zero rows aborts the transaction (nothing is written,
// not even the contributor, as in Foundry); only on that error path does the
// bare server send Foundry's SELECT 1 FROM assets as a second round trip.
// The response is built from the request, as Foundry's is.

const (
	maxAmountMicros      = 1_000_000_000 * microScale // attribution.MaxAmount
	maxAssetTotalMicros  = 9_000_000_000 * microScale // attribution.MaxAssetTotal
	maxContributorIDLen  = 256
	maxMetadataBytes     = 4 << 10
	trustImplicit        = "implicit"
	sourceAPI            = "api"
	sqlEnsureContributor = `INSERT INTO ledger.contributors (id, handle, trust_level, created_at) VALUES ($1, NULL, $2, $3)
		ON CONFLICT (id) DO NOTHING`
	sqlAddToAssetChecked = `WITH added AS (UPDATE ledger.assets SET total_cost_micros = total_cost_micros + $2, contribution_count = contribution_count + 1
		WHERE id = $1 AND total_cost_micros <= $3 RETURNING 1)
		SELECT 1 / COUNT(*) FROM added`
	sqlAssetExists        = `SELECT 1 FROM ledger.assets WHERE id = $1`
	sqlInsertContribution = `INSERT INTO ledger.contributions (id, contributor_id, asset_id, cost_micros, coherence, metadata, source, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
)

// ContributionRequest is POST /api/contributions' body.
type ContributionRequest struct {
	ContributorID string         `json:"contributor_id"`
	AssetID       string         `json:"asset_id"`
	CostAmount    *float64       `json:"cost_amount"`
	Metadata      map[string]any `json:"metadata"`
}

// Contribution is the route's answer.
type Contribution struct {
	ID             string         `json:"id"`
	ContributorID  string         `json:"contributor_id"`
	AssetID        string         `json:"asset_id"`
	CostAmount     float64        `json:"cost_amount"`
	CoherenceScore float64        `json:"coherence_score"`
	Metadata       map[string]any `json:"metadata"`
	Source         string         `json:"source"`
	CreatedAt      string         `json:"created_at"`
}

// validContributorID is attribution.ValidateContributorID.
func validContributorID(id string) []FieldError {
	msg := ""
	switch {
	case strings.TrimSpace(id) == "":
		msg = "is required"
	case !utf8.ValidString(id):
		msg = "must be valid UTF-8"
	case utf8.RuneCountInString(id) > maxContributorIDLen:
		msg = fmt.Sprintf("must be at most %d characters", maxContributorIDLen)
	case strings.ContainsFunc(id, unicode.IsControl):
		msg = "must not contain control characters"
	}
	if msg == "" {
		return nil
	}
	return []FieldError{field("contributor_id", "%s", msg)}
}

// coherenceScore is attribution.Score: 500 thousandths, +200 with tests,
// +200 with docs, +100 for low complexity, capped at 1000.
func coherenceScore(meta map[string]any) (int64, []FieldError) {
	c := int64(500)
	var errs []FieldError
	award := func(key string, bonus int64) {
		v, ok := meta[key]
		if !ok || v == nil {
			return
		}
		b, isBool := v.(bool)
		if !isBool {
			errs = append(errs, field("metadata."+key, "must be a boolean"))
			return
		}
		if b {
			c += bonus
		}
	}
	award("has_tests", 200)
	award("has_docs", 200)
	if v, ok := meta["complexity"]; ok && v != nil {
		s, isString := v.(string)
		switch {
		case !isString:
			errs = append(errs, field("metadata.complexity", "must be a string"))
		case s == "low":
			c += 100
		}
	}
	return min(c, 1000), errs
}

// CreateContribution records a contribution; the route answers it with
// 201 Created.
func (core *Core) CreateContribution(ctx context.Context, req ContributionRequest) (Contribution, error) {
	meta := req.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	var cost int64
	var costErr []FieldError
	if req.CostAmount == nil {
		costErr = []FieldError{field("cost_amount", "is required")}
	} else {
		m, err := fromFloat(*req.CostAmount)
		switch {
		case err != nil:
			costErr = []FieldError{field("cost_amount", "%s", err.Error())}
		case m < 0:
			costErr = []FieldError{field("cost_amount", "must not be negative")}
		case m > maxAmountMicros:
			costErr = []FieldError{field("cost_amount", "must be at most %d", maxAmountMicros/microScale)}
		}
		cost = m
	}
	coherence, scoreErr := coherenceScore(meta)
	metaJSON, jerr := json.Marshal(meta)
	var fields []FieldError
	fields = append(fields, validContributorID(req.ContributorID)...)
	if req.AssetID == "" {
		fields = append(fields, field("asset_id", "is required"))
	}
	fields = append(fields, costErr...)
	fields = append(fields, scoreErr...)
	switch {
	case jerr != nil:
		fields = append(fields, field("metadata", "must be plain JSON (no NaN or infinite numbers)"))
	case len(metaJSON) > maxMetadataBytes:
		fields = append(fields, field("metadata", "must be at most %d bytes of JSON", maxMetadataBytes))
	}
	if err := collect(fields); err != nil {
		return Contribution{}, err
	}

	at := now()
	c := Contribution{
		ID: newID(), ContributorID: req.ContributorID, AssetID: req.AssetID, CostAmount: microsFloat(cost),
		CoherenceScore: float64(coherence) / 1000, Metadata: meta, Source: sourceAPI, CreatedAt: rfc3339(at),
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sqlEnsureContributor, c.ContributorID, trustImplicit, micros(at))
	b.Queue(sqlAddToAssetChecked, c.AssetID, cost, maxAssetTotalMicros-cost)
	b.Queue(sqlInsertContribution, c.ID, c.ContributorID, c.AssetID, cost, coherence, string(metaJSON), sourceAPI, micros(at))
	b.Queue("COMMIT")
	err := core.run(ctx, b, func(br pgx.BatchResults) error {
		for range b.Len() {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if pgCode(err) == "22012" { // the asset UPDATE matched no row
		err = core.contributionRefused(ctx, c.AssetID)
	}
	if err != nil {
		return Contribution{}, err
	}
	return c, nil
}

// contributionRefused tells a missing asset (404) from one whose total would
// pass the maximum (400), with Foundry's SELECT 1 FROM assets.
func (core *Core) contributionRefused(ctx context.Context, assetID string) error {
	var one int
	err := core.pool.QueryRow(ctx, sqlAssetExists, assetID).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fail(http.StatusNotFound, "asset %q not found", assetID)
	case err != nil:
		return fmt.Errorf("find asset: %w", err)
	}
	return fail(http.StatusBadRequest, "asset %q total_cost would exceed %d", assetID, maxAssetTotalMicros/microScale)
}
