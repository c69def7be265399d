// Package portfolio is the portfolio service as a module, on its own schema.
package portfolio

import (
	"context"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/portfolio/internal/handler"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Module returns the portfolio module.
func Module() app.Module {
	return app.Module{
		Name:       "portfolio",
		Service:    portfoliov1.PortfolioService_ServiceDesc.ServiceName,
		Migrations: store.Migrations(),
		Start: func(_ context.Context, h *app.Host) error {
			h.RegisterService(&portfoliov1.PortfolioService_ServiceDesc, handler.New(h.DB))
			return nil
		},
	}
}
