package handler

import (
	"testing"

	"github.com/stretchr/testify/require"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/wire"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

// TestStagesAreTheEnumsWords pins the rules' stages to the API's Stage
// enum: the same words in the same order, each mapping there and back, so
// a stage added on one side only fails here rather than reaching a client
// as the enum's zero.
func TestStagesAreTheEnumsWords(t *testing.T) {
	t.Parallel()
	require.Len(t, portfoliov1.Stage_name, len(idea.Stages)+1, "the enum has the stages and its zero")
	for i, s := range idea.Stages {
		e := wire.Enum[portfoliov1.Stage](portfoliov1.Stage_value, s)
		require.Equal(t, portfoliov1.Stage(i+1), e, "stage %s is the enum's value %d", s, i+1)
		require.Equal(t, string(s), wire.Word(portfoliov1.Stage_name, e))
	}
	require.Equal(t, portfoliov1.Stage_stage_unspecified, wire.Enum[portfoliov1.Stage](portfoliov1.Stage_value, idea.Stage("finished")))
	require.Equal(t, "", wire.Word(portfoliov1.Stage_name, portfoliov1.Stage_stage_unspecified), "the zero is not given")
	require.Equal(t, "42", wire.Word(portfoliov1.Stage_name, portfoliov1.Stage(42)), "a number the enum lacks reaches the use case, which refuses it")
}
