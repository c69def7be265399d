package fault_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestKindOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want fault.Kind
	}{
		{"plain error is internal", fmt.Errorf("boom"), fault.Internal},
		{"direct", fault.New(fault.NotFound, "idea %q", "x"), fault.NotFound},
		{"wrapped", fmt.Errorf("load: %w", fault.New(fault.Conflict, "busy")), fault.Conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, fault.KindOf(tt.err))
		})
	}
}

func TestValidationJoinsFieldMessages(t *testing.T) {
	t.Parallel()
	err := fault.Validation(fault.Field("handle", "must match %s", "[a-z]"), fault.Field("age", "too small"))
	require.Equal(t, fault.Invalid, err.Kind)
	require.Equal(t, "handle: must match [a-z]; age: too small", err.Detail)
	require.Len(t, err.Fields, 2)
	require.Equal(t, "invalid: handle: must match [a-z]; age: too small", err.Error())
}
