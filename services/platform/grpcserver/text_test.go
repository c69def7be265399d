package grpcserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestCheckText(t *testing.T) {
	t.Parallel()
	intercept := checkText()
	call := func(ctx context.Context, req any) error {
		_, err := intercept(ctx, req, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return nil, nil })
		return err
	}
	meta, err := structpb.NewStruct(map[string]any{"ok": "fine", "deep": map[string]any{"x": "a\x00b"}})
	require.NoError(t, err)
	for req, field := range map[any]string{
		&portfoliov1.CreateIdeaRequest{Name: "a\x00b"}:                          "name",
		&portfoliov1.CreateIdeaRequest{Name: "ok", Tags: []string{"x", "\xff"}}: "tags",
		&ledgerv1.CreateContributionRequest{ContributorId: "c", Metadata: meta}: "metadata.fields[deep].struct_value.fields[x].string_value",
	} {
		err := call(context.Background(), req)
		require.Equal(t, fault.Invalid, fault.KindOf(err), "%v", req)
		fe, _ := fault.As(err)
		require.Equal(t, field, fe.Fields[0].Field)
	}
	require.NoError(t, call(context.Background(), &portfoliov1.CreateIdeaRequest{Name: "Solar kettle", Tags: []string{"ünïcode"}}))
	unsigned := metadata.NewIncomingContext(context.Background(), metadata.Pairs(authz.MetadataKey, "kind=anonymous"))
	require.Equal(t, fault.Invalid, fault.KindOf(call(unsigned, &portfoliov1.CreateIdeaRequest{Name: "a\x00b"})),
		"a principal no gateway signed is checked like any direct call")
	skey, _, err := authz.GenerateKey("gateway-test")
	require.NoError(t, err)
	fwd, err := authz.NewForwarder(skey)
	require.NoError(t, err)
	edge := metadata.NewIncomingContext(context.Background(), fwd.Metadata(authz.Principal{Kind: authz.Anonymous}))
	require.NoError(t, call(edge, &portfoliov1.CreateIdeaRequest{Name: "a\x00b"}), "the gateway checked it already")
}
