package usecase_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

func TestHTTPRate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status int
		body   string
		want   money.Micros
		ok     bool
	}{
		{200, `{"cc_per_usd": 98.25}`, 98_250_000, true},
		{200, `{"cc_per_usd": 0}`, 0, false},
		{200, `{"cc_per_usd": -3}`, 0, false},
		{200, `{"rate": 1}`, 0, false},
		{200, `not json`, 0, false},
		{503, `{"cc_per_usd": 1}`, 0, false},
		// The body is exactly one JSON value (whitespace around it aside):
		// anything after it is refused, not ignored.
		{200, " {\"cc_per_usd\": 98.25}\n", 98_250_000, true},
		{200, `{"cc_per_usd": 98.25}{"cc_per_usd": 1}`, 0, false},
		{200, `{"cc_per_usd": 98.25} {}`, 0, false},
		{200, `{"cc_per_usd": 98.25}]`, 0, false},
		{200, `{"cc_per_usd": 98.25} trailing`, 0, false},
		{200, `{"cc_per_usd": 98.25}` + strings.Repeat(" ", 64<<10), 0, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(c.body))
		}))
		got, err := usecase.HTTPRate{URL: srv.URL}.Rate(context.Background())
		srv.Close()
		if c.ok {
			require.NoError(t, err, c.body)
			require.Equal(t, c.want, got)
		} else {
			require.Error(t, err, c.body)
		}
	}
}

// TestReadRateFromAnOracle: readings from the source go through the
// breaker and are recorded; a fixed source is recorded only when it would
// change something.
func TestReadRateFromAnOracle(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		price := `{"cc_per_usd": 100}`
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(price)) }))
		defer srv.Close()
		e := setup(t, engine)
		app := usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Rates: usecase.HTTPRate{URL: srv.URL}})
		ctx := context.Background()
		rd, recorded, err := app.ReadRate(ctx)
		require.NoError(t, err)
		require.True(t, recorded)
		require.Equal(t, credit.Accepted, rd.Verdict)
		price = `{"cc_per_usd": 150}`
		e.clock.Advance(time.Minute)
		rd, _, err = app.ReadRate(ctx)
		require.NoError(t, err)
		require.Equal(t, credit.Tripped, rd.Verdict)
		r, err := app.ExchangeRate(ctx)
		require.NoError(t, err)
		require.Equal(t, money.Micros(100*cc), r.Quote.Mid)
		require.Equal(t, "http", r.Source)

		fixed := usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Rates: usecase.FixedRate(100 * cc)})
		_, recorded, err = fixed.ReadRate(ctx)
		require.NoError(t, err)
		require.True(t, recorded, "the breaker is open: a fixed reading still counts towards recovery")
	})
}

func TestFixedRateIsRecordedOnlyWhenItChangesSomething(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		app := usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Rates: usecase.FixedRate(100 * cc)})
		_, recorded, err := app.ReadRate(ctx)
		require.NoError(t, err)
		require.True(t, recorded, "the first reading")
		e.clock.Advance(time.Minute)
		_, recorded, err = app.ReadRate(ctx)
		require.NoError(t, err)
		require.False(t, recorded, "the same price, breaker closed, recent: nothing to record")
		e.clock.Advance(2 * time.Hour)
		_, recorded, err = app.ReadRate(ctx)
		require.NoError(t, err)
		require.True(t, recorded, "the last reading left the moving-average window")
		moved := usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Rates: usecase.FixedRate(101 * cc)})
		rd, recorded, err := moved.ReadRate(ctx)
		require.NoError(t, err)
		require.True(t, recorded, "a reconfigured rate")
		require.Equal(t, credit.Accepted, rd.Verdict)
	})
}
