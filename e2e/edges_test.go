package e2e_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// TestNullDryRunIsRefused is the issue's: "dry_run": null on a stake was
// read as false and staked for real. A flag sent as null is a 422 naming
// it, and nothing moves.
func TestNullDryRunIsRefused(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := registerUser(t, sys, "ada")
		requireStatus(t, http.StatusCreated, deposit(t, sys, ada.id, 10, "ada-deposit", asAdmin))
		idea := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": "Nulls", "potential_value": 10, "estimated_cost": 1})
		requireStatus(t, http.StatusCreated, idea)
		before := balances(t, sys, ada.id)

		r := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea.JSON["id"].(string)+"/stake"),
			`{"contributor_id":"`+ada.id+`","amount_cc":5,"dry_run":null}`, ada.bearer())
		requireFieldError(t, r, "dry_run")
		require.Equal(t, "dry_run: must be true or false, not null", r.JSON["detail"])
		require.Equal(t, before, balances(t, sys, ada.id), "nothing was staked")
	})
}

// TestDetailsAreSentences is the issue's: raw parser text reached the
// client (strconv.ParseInt: parsing "1x"; proto: (line 1:39): invalid
// value for double field potentialValue). Every refusal below is a
// sentence naming the field, or the body, and what it must be.
func TestDetailsAreSentences(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	idea := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": "Details", "potential_value": 10, "estimated_cost": 1})
	requireStatus(t, http.StatusCreated, idea)
	ideaURL := sys.URL("/api/ideas/" + idea.JSON["id"].(string))
	for _, tc := range []struct {
		what, method, url, body, detail, field string
	}{
		{"a path parameter", http.MethodGet, sys.URL("/api/audit/entries/1x/proof"), "", "seq: must be a whole number", "seq"},
		{"a key sent twice", http.MethodPatch, ideaURL, `{"potential_value":1,"potential_value":1e999}`, "potential_value: is sent more than once", "potential_value"},
		{"a body cut short", http.MethodPost, sys.URL("/api/ideas"), `{"name":`, "the body is not valid JSON: it ends before its value does", ""},
		{"a stray character", http.MethodPost, sys.URL("/api/ideas"), `{"name":"x",}`, "the body is not valid JSON: it goes wrong at byte 13", ""},
		{"a null body", http.MethodPost, sys.URL("/api/ideas"), `null`, "the body must be a JSON object, not null", ""},
		{"a null in a list", http.MethodPost, sys.URL("/api/ideas"), `{"name":"x","tags":[null]}`, "tags[0]: must not be null", "tags[0]"},
		{"a lone surrogate", http.MethodPost, sys.URL("/api/ideas"), `{"name":"\ud800"}`, "the body is not valid JSON: a string holds an escape that is no character (a lone surrogate)", ""},
	} {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		r := request(t, tc.method, tc.url, body)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", tc.what, r.Raw)
		require.Equal(t, tc.detail, r.JSON["detail"], tc.what)
		if tc.field != "" {
			requireFieldError(t, r, tc.field)
		}
	}
}

// TestGrpcMetadataIdempotencyKeyIsTheKey is the issue's: grpc-gateway's
// own spelling of the header was ignored, so two withdrawals with the same
// key both happened. It is now the Idempotency-Key: the retry answers the
// first withdrawal and moves nothing; sending both spellings is a 422.
func TestGrpcMetadataIdempotencyKeyIsTheKey(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := registerUser(t, sys, "ada")
		requireStatus(t, http.StatusCreated, deposit(t, sys, ada.id, 10, "ada-deposit", asAdmin))
		held := balances(t, sys, ada.id)["available_cc"].(float64)
		withdraw := map[string]any{"contributor_id": ada.id, "amount_cc": 1}
		first := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), withdraw, ada.bearer(), "Grpc-Metadata-Idempotency-Key: w-1")
		requireStatus(t, http.StatusOK, first)
		again := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), withdraw, ada.bearer(), "Grpc-Metadata-Idempotency-Key: w-1")
		requireStatus(t, http.StatusOK, again)
		require.Equal(t, first.JSON, again.JSON, "the first answer again")
		require.InDelta(t, held-1, balances(t, sys, ada.id)["available_cc"], 1e-9, "one withdrawal")
		same := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), withdraw, ada.bearer(), "Idempotency-Key: w-1")
		require.Equal(t, first.JSON, same.JSON, "the same key, in either spelling")

		both := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), withdraw, ada.bearer(),
			"Idempotency-Key: w-2", "Grpc-Metadata-Idempotency-Key: w-3")
		requireFieldError(t, both, "Grpc-Metadata-Idempotency-Key")
		require.InDelta(t, held-1, balances(t, sys, ada.id)["available_cc"], 1e-9, "nothing more")
	})
}

// TestFloatNoiseIsRefusedOverBothTransports: the float noise
// (0.30000000000000004, 0.1 + 0.2 as a double) in an amount of money was
// refused over REST but rounded over gRPC. Both now refuse it alike, the
// money's parsing being the use case's (ledger/internal/money), with the
// same field and sentence.
func TestFloatNoiseIsRefusedOverBothTransports(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := registerUser(t, sys, "ada")
		asset := request(t, http.MethodPost, sys.URL("/api/assets"), map[string]any{"type": "CODE", "name": "noise"})
		requireStatus(t, http.StatusCreated, asset)
		const noise = 0.1 + 0.2 // the constant is exact; a double of it is not
		amount := 0.1
		amount += 0.2
		require.NotEqual(t, noise, amount, "the double carries the noise")

		rest := request(t, http.MethodPost, sys.URL("/api/cc/deposit"), `{"contributor_id":"`+ada.id+`","amount_usd":0.30000000000000004,"reference":"r-1"}`)
		requireFieldError(t, rest, "amount_usd")
		require.Equal(t, "amount_usd: must have at most 6 decimal places", rest.JSON["detail"])
		restCost := request(t, http.MethodPost, sys.URL("/api/contributions"),
			`{"contributor_id":"`+ada.id+`","asset_id":"`+asset.JSON["id"].(string)+`","cost_amount":0.30000000000000004}`)
		requireFieldError(t, restCost, "cost_amount")

		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", allinonetest.AdminKey)
		ledger := ledgerv1.NewLedgerServiceClient(sys.Dial(t))
		_, err := ledger.Deposit(ctx, &ledgerv1.DepositRequest{ContributorId: ada.id, AmountUsd: amount, Reference: "g-1"})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		require.Equal(t, "amount_usd: must have at most 6 decimal places", status.Convert(err).Message())
		_, err = ledger.CreateContribution(ctx, &ledgerv1.CreateContributionRequest{ContributorId: ada.id,
			AssetId: asset.JSON["id"].(string), CostAmount: proto.Float64(amount)})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		require.Zero(t, balances(t, sys, ada.id)["available_cc"], "nothing was minted")
	})
}
