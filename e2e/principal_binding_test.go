package e2e_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/database"
)

// TestServiceKeyAloneNamesNoContributor is the issue's: whoever held the
// service key could send any foundry-principal and withdraw Alice's CC
// over gRPC. Now a service believes a forwarded principal only with a
// gateway's signature; the service key alone is the Service role; and a
// person calls gRPC with its own token, as over REST, without the service
// key.
func TestServiceKeyAloneNamesNoContributor(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		alice := registerUser(t, sys, "alice")
		requireStatus(t, http.StatusCreated, deposit(t, sys, alice.id, 10, "alice-deposit", asAdmin))
		held := balances(t, sys, alice.id)["available_cc"].(float64)
		require.Positive(t, held)

		ledger := ledgerv1.NewLedgerServiceClient(sys.Dial(t))
		asAliceForged := authz.Principal{Kind: authz.Session, Role: authz.Contributor, ID: "h", ContributorID: alice.id, Name: "alice"}
		forged := asAliceForged.Encode()
		skey, _, err := authz.GenerateKey("not-a-gateway")
		require.NoError(t, err)
		stranger, err := authz.NewForwarder(skey)
		require.NoError(t, err)
		for what, value := range map[string]string{
			"unsigned":      forged,
			"a made-up sig": forged + "&until=9999999999&sig=f27245c5.AAAA",
			"another key's": stranger.Metadata(asAliceForged).Get(authz.MetadataKey)[0],
		} {
			ctx := metadata.AppendToOutgoingContext(context.Background(), authz.MetadataKey, value)
			_, err := ledger.Withdraw(ctx, &ledgerv1.WithdrawRequest{ContributorId: alice.id, AmountCc: 1})
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%s: %v", what, err)
		}
		require.Equal(t, held, balances(t, sys, alice.id)["available_cc"], "nothing was withdrawn")

		// The service key alone is a service: it reads, and withdraws
		// nobody's CC.
		_, err = ledger.Withdraw(context.Background(), &ledgerv1.WithdrawRequest{ContributorId: alice.id, AmountCc: 1})
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)

		// A person over gRPC: its own token, no service key.
		plain, err := grpc.NewClient(sys.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		t.Cleanup(func() { _ = plain.Close() })
		direct := ledgerv1.NewLedgerServiceClient(plain)
		_, err = direct.GetBalances(context.Background(), &ledgerv1.GetBalancesRequest{ContributorId: alice.id})
		require.Equal(t, codes.Unauthenticated, status.Code(err), "no credential and no service key: %v", err)
		require.ErrorContains(t, err, "a token in authorization metadata")
		asAlice := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+alice.token)
		w, err := direct.Withdraw(asAlice, &ledgerv1.WithdrawRequest{ContributorId: alice.id, AmountCc: 1})
		require.NoError(t, err)
		require.Equal(t, 1.0, w.GetAmountCc())
		require.InDelta(t, held-1, balances(t, sys, alice.id)["available_cc"], 1e-9)
		_, err = direct.Withdraw(metadata.AppendToOutgoingContext(asAlice, authz.MetadataKey, forged),
			&ledgerv1.WithdrawRequest{ContributorId: alice.id, AmountCc: 1})
		require.Equal(t, codes.Unauthenticated, status.Code(err), "a forwarded principal needs the service key: %v", err)
		bob := registerUser(t, sys, "bob")
		_, err = direct.Withdraw(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+bob.token),
			&ledgerv1.WithdrawRequest{ContributorId: alice.id, AmountCc: 1})
		require.Equal(t, codes.PermissionDenied, status.Code(err), "Bob's token acts only for Bob: %v", err)

		// grpcurl's list, as the README runs it: reflection with the
		// administrator key, no service key.
		stream, err := reflectionpb.NewServerReflectionClient(plain).ServerReflectionInfo(
			metadata.AppendToOutgoingContext(context.Background(), "x-api-key", allinonetest.AdminKey))
		require.NoError(t, err)
		require.NoError(t, stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}))
		listed, err := stream.Recv()
		require.NoError(t, err)
		require.True(t, slices.ContainsFunc(listed.GetListServicesResponse().GetService(), func(s *reflectionpb.ServiceResponse) bool {
			return s.GetName() == "foundry.ledger.v1.LedgerService"
		}), "%v", listed)
		require.NoError(t, stream.CloseSend())

		// The gateway's own calls still pass: its principal is signed.
		requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
			map[string]any{"contributor_id": alice.id, "amount_cc": 1}, alice.bearer()))
		require.InDelta(t, held-2, balances(t, sys, alice.id)["available_cc"], 1e-9)
	})
}

// TestAuthorizationMatrixOverGRPC is the matrix's column for the service
// key without a gateway's signature: every method that declares a policy,
// called with the service key and a foundry-principal no gateway signed
// (the administrator's, a contributor's), is refused as unauthenticated
// before its handler runs, whatever its policy allows; and every method
// is served, so none is left out.
func TestAuthorizationMatrixOverGRPC(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	conn := sys.Dial(t)
	policies, err := authz.Policies()
	require.NoError(t, err)
	forged := []authz.Principal{
		{Kind: authz.AdminKey, Role: authz.Admin, ID: "admin", Name: "admin"},
		{Kind: authz.Session, Role: authz.Contributor, ID: "h", ContributorID: "alice", Name: "alice"},
	}
	for _, method := range slices.Sorted(maps.Keys(policies)) {
		desc, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(strings.ReplaceAll(strings.TrimPrefix(method, "/"), "/", ".")))
		require.NoError(t, err, method)
		md := desc.(protoreflect.MethodDescriptor)
		for _, p := range forged {
			ctx := metadata.AppendToOutgoingContext(context.Background(), authz.MetadataKey, p.Encode())
			err := conn.Invoke(ctx, method, dynamicpb.NewMessage(md.Input()), dynamicpb.NewMessage(md.Output()))
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%s as a forged %s: %v", method, p.Kind, err)
			require.ErrorContains(t, err, "carries no gateway's signature", method)
		}
	}
	t.Logf("%d methods refuse a principal no gateway signed", len(policies))
}

// TestServicesBelieveOnlyTheirGateways: a gateway in a process of its own
// forwards principals the services believe when it signs with the key
// whose verifier they were given; a gateway with any other key is refused
// on every route, anonymous reads included, with a detail that says why.
func TestServicesBelieveOnlyTheirGateways(t *testing.T) {
	t.Parallel()
	storage := allinonetest.NewStorage(t, database.SQLite)
	sys := allinonetest.Start(t, storage)
	var peers []string
	for _, svc := range allinonetest.ServiceNames() {
		peers = append(peers, "-"+svc+"-addr="+sys.GRPCAddr)
	}
	ours := allinonetest.NewProc(t, "gateway", "gateway", storage, peers...)
	ours.Start()
	skey, _, err := authz.GenerateKey("foundry-gateway")
	require.NoError(t, err)
	rogue := allinonetest.NewProc(t, "rogue-gateway", "gateway", storage, peers...).WithEnv("FOUNDRY_PRINCIPAL_SIGNING_KEY=" + skey)
	rogue.Start()

	idea := map[string]any{"name": "Signed", "potential_value": 10, "estimated_cost": 1}
	requireStatus(t, http.StatusCreated, request(t, http.MethodPost, ours.URL("/api/ideas"), idea, asAdmin))
	requireStatus(t, http.StatusOK, request(t, http.MethodGet, ours.URL("/api/ideas"), nil))
	for _, r := range []response{
		request(t, http.MethodPost, rogue.URL("/api/ideas"), idea, asAdmin),
		request(t, http.MethodGet, rogue.URL("/api/ideas"), nil),
	} {
		requireStatus(t, http.StatusUnauthorized, r)
		require.Contains(t, r.JSON["detail"], "signed by a key this service does not trust (FOUNDRY_PRINCIPAL_VERIFIER_KEYS)")
	}
	ideas, _ := listPage(t, request(t, http.MethodGet, sys.URL("/api/ideas"), nil), "ideas")
	require.Len(t, ideas, 1, "only the trusted gateway's idea was made")
}
