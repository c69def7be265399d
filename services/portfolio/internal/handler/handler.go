// Package handler implements the portfolio service's gRPC API. RPCs whose
// milestone has not landed answer Unimplemented (HTTP 501) through the
// embedded base.
package handler

import (
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Handler serves foundry.portfolio.v1.PortfolioService.
type Handler struct {
	portfoliov1.UnimplementedPortfolioServiceServer

	db *database.DB
}

// New returns a Handler over the service's database.
func New(db *database.DB) *Handler { return &Handler{db: db} }
